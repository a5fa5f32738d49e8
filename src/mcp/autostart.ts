import type { RpcConnection } from "../protocol/rpc_client.ts";
import { UntrustedPathError } from "../protocol/trusted_path.ts";
import { errorText } from "./config.ts";
import { RelayConnectError } from "./relay.ts";
import { spawnProblem } from "./spawn_problem.ts";
import { sleep } from "../protocol/timers.ts";

/** How often the facade retries connecting after spawning a kernel (M-START-1). */
export const AUTOSTART_POLL_MS = 50;
/** How long the facade waits for a spawned kernel to accept connections (M-START-1). */
export const AUTOSTART_WAIT_MS = 5000;
/** How long a connection the spawned kernel dropped during attach waits for that kernel's exit. */
const DROPPED_EXIT_WAIT_MS = 1000;
/** Kernel exit status meaning another kernel owns the socket (K-CLI-1): keep waiting for it. */
const ANOTHER_KERNEL = 3;

/** A kernel process the facade started (and the command that did), or why it could not be started. */
export type SpawnedKernel = { exited: Promise<number>; command: string } | { problem: string };

/**
 * Spawns `<kernel> --socket <path>` detached (own process group, stdio null, not waited for
 * and not killed on exit) with `SHOAL_TOKEN` emptied (M-START-1), and `SHOAL_PROJECT`, which is
 * this facade's and not its sessions' (M-ONB-1). A failure names the kernel
 * tried, the PATH searched and the fix (M-PERM-4).
 */
export function spawnKernel(
  kernel: string,
  socket: string,
  searchPath: string | null,
): SpawnedKernel {
  let child: Deno.ChildProcess;
  try {
    child = new Deno.Command(kernel, {
      args: ["--socket", socket],
      stdin: "null",
      stdout: "null",
      stderr: "null",
      env: { SHOAL_TOKEN: "", SHOAL_PROJECT: "" },
      detached: true,
    }).spawn();
  } catch (e) {
    return { problem: spawnProblem(kernel, searchPath, e) };
  }
  child.unref();
  return { exited: child.status.then((s) => s.code), command: `${kernel} --socket ${socket}` };
}

/**
 * Retries `connect` every {@link AUTOSTART_POLL_MS} for up to {@link AUTOSTART_WAIT_MS}, giving up
 * early when the spawned kernel exits with a status other than "another kernel owns the socket", or
 * when `connect` finds the socket path untrusted (G-SOCK-10) or its relay refuses it for good. The
 * kernel's stderr is null (M-START-1), so an exit names the command that shows why.
 */
export async function waitForKernel(
  connect: () => Promise<RpcConnection>,
  spawned: { exited: Promise<number>; command: string },
): Promise<{ conn: RpcConnection } | { problem: string }> {
  const exit: { status: number | null } = { status: null };
  spawned.exited.then((code) => exit.status = code);
  const deadline = Date.now() + AUTOSTART_WAIT_MS;
  let last = "";
  while (true) {
    try {
      return { conn: await connect() };
    } catch (e) {
      if (e instanceof UntrustedPathError) return { problem: e.message };
      if (e instanceof RelayConnectError && !e.unreachable) return { problem: e.message };
      last = errorText(e);
    }
    if (exit.status !== null && exit.status !== ANOTHER_KERNEL) {
      return { problem: exitProblem(exit.status, spawned.command) };
    }
    if (Date.now() >= deadline) {
      return {
        problem: `the autostarted kernel did not accept connections within 5000 ms (${last})`,
      };
    }
    await sleep(AUTOSTART_POLL_MS);
  }
}

/** What the facade reports of a spawned kernel that exited with `status` (its stderr is null). */
function exitProblem(status: number, command: string): string {
  return `the autostarted kernel exited with status ${status} (to see why, run in a terminal: ${command})`;
}

/**
 * Why the spawned kernel that dropped the facade's connection during attach exited: it binds its
 * socket before it looks at its policy, journal and bash (G-SOCK-3), so a start that fails there
 * drops the connection and exits at once. Null when it did not exit within
 * {@link DROPPED_EXIT_WAIT_MS}, or exited because another kernel owns the socket.
 */
export async function droppedAttach(
  spawned: { exited: Promise<number>; command: string },
): Promise<string | null> {
  const status = await Promise.race([spawned.exited, sleep(DROPPED_EXIT_WAIT_MS).then(() => null)]);
  return status === null || status === ANOTHER_KERNEL ? null : exitProblem(status, spawned.command);
}
