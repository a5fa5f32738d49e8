import type { SocketChoice } from "../../protocol/socket_path.ts";
import type { ServeArgs } from "../cli/serve_args.ts";
import { prepareSocket, StartupError } from "./socket_prep.ts";
import { keepInheritedFromChildren } from "./inherited_fds.ts";
import { bashCandidates, resolveBash } from "../bash/discover.ts";

/**
 * Runs the daemon until SIGINT/SIGTERM; returns the exit status (G-SOCK-3..9). A fatal error
 * is also appended to the state directory's kernel.log when it can be (G-STATE-2): an
 * autostarted kernel's stderr is null (M-START-1), so its log was the one place left to say why
 * it exited. A kernel that lost the socket to another (status 3) has nothing to report.
 */
export async function serve(
  opts: ServeArgs,
  stateDir: string,
  socket: SocketChoice,
): Promise<number> {
  try {
    return await serveUntilStopped(opts, stateDir, socket);
  } catch (e) {
    if (!(e instanceof StartupError && e.status === 3)) {
      logFatal(stateDir, e instanceof Error ? e.message : String(e));
    }
    throw e;
  }
}

/** Appends `shoal-kernel: <message>` to `<stateDir>/kernel.log` if the directory exists. */
function logFatal(stateDir: string, message: string): void {
  try {
    const log = Deno.openSync(`${stateDir}/kernel.log`, {
      create: true,
      append: true,
      mode: 0o600,
    });
    try {
      log.writeSync(new TextEncoder().encode(`shoal-kernel: ${message}\n`));
    } finally {
      log.close();
    }
  } catch {
    // no state directory (yet), or it is unwritable: stderr has said it
  }
}

/**
 * {@link serve} itself. The socket is bound first (G-SOCK-3), before the kernel's modules load
 * and its bash, policy, journal and sandbox are looked at: a facade retrying every 50 ms
 * (M-START-1) then connects at its first retry, and its attach waits in the socket's backlog
 * until the kernel is ready (bound after the policy and the journal, the bind missed that retry,
 * and the next came 50 ms later: issue 33). A start that fails after the bind removes the socket
 * before the kernel exits, so nothing is left a facade could connect to.
 */
async function serveUntilStopped(
  opts: ServeArgs,
  stateDir: string,
  socket: SocketChoice,
): Promise<number> {
  Deno.env.delete("SHOAL_TOKEN");
  // the facade's project (M-ONB-1), left empty by the facade that autostarted this kernel
  Deno.env.delete("SHOAL_PROJECT");
  keepInheritedFromChildren();
  const uid = Deno.uid() ?? 0;
  const prepared = await prepareSocket(socket, uid);
  try {
    // Bash's version is asked for while the modules that start the sandbox probe load: no turn
    // of the event loop comes during an import, and the probe started only after both (issue 33).
    const bash = resolveBash(opts.bash, bashCandidates(Deno.build.os, Deno.env.get("PATH")));
    bash.catch(() => {}); // awaited by serveBound; a failed import leaves it unread
    const { serveBound } = await import("./serve_bound.ts");
    return await serveBound(opts, stateDir, socket, uid, prepared, bash);
  } finally {
    prepared.release();
  }
}
