/**
 * A forwarded loopback port or a `net_listen` port below 1024 (P-NET-1: a grant of `127.0.0.1:79`
 * or of `net_listen` 80 works like any other). The forwarder, or the agent's own server, binds it
 * inside the sandbox's network namespace, where it has no capability and the namespace's
 * `net.ipv4.ip_unprivileged_port_start` is 1024, as on the host; bwrap's `--cap-add` cannot help
 * a kernel that is not root (the namespace belongs to bwrap's outer user namespace, the runs are
 * in the inner one, `outer_userns.ts`). So the kernel lowers that namespace's floor to the lowest
 * such port from outside, as the owner of its user namespace, before the sandbox's first run (the
 * forwarder waits for it too, `forwarder_script.ts`). Only that namespace changes: the host's
 * floor stays where it is. */
import { childrenOf } from "./protected_mounts.ts";
import { outerUserns } from "./outer_userns.ts";
import type { SandboxNet } from "../net/destinations.ts";
import { PERL } from "../net/inside.ts";

/** The port below which binding takes CAP_NET_BIND_SERVICE where nobody changed it. */
export const PRIVILEGED_PORTS = 1024;

/** Longest wait for the sandbox's network namespace to appear under the spawned process. */
const APPEAR_MS = 5000;
const POLL_MS = 5;
/** Tries of the write, {@link RETRY_MS} apart: well within the forwarder's 5 s wait. */
const RETRIES = 10;
const RETRY_MS = 200;

/**
 * The floor a sandbox's network namespace needs: its lowest port below {@link PRIVILEGED_PORTS}
 * that `net` forwards or a `net_listen` grant in `listen` names (`*`: any, so 0), or null when
 * none is that low.
 */
export function namespaceFloor(net: SandboxNet | null, listen: readonly string[]): number | null {
  const ports = [
    ...(net?.forwards ?? []).map((f) => f.port),
    ...listen.map((grant) => grant === "*" ? 0 : Number(grant)),
  ];
  const low = ports.filter((p) => Number.isInteger(p) && p < PRIVILEGED_PORTS);
  return low.length === 0 ? null : Math.min(...low);
}

/** The namespace of `kind` that `pid` is in, or null once it is gone. */
function namespaceOf(pid: number | "self", kind: string): string | null {
  try {
    return Deno.readLinkSync(`/proc/${pid}/ns/${kind}`);
  } catch {
    return null;
  }
}

/** A process below `root` (or `root`) in another network namespace than the kernel's. */
function inOtherNet(root: number): number | null {
  const own = namespaceOf("self", "net");
  const queue = [root];
  for (let i = 0; i < queue.length && i < 64; i++) {
    const pid = queue[i];
    const net = namespaceOf(pid, "net");
    if (net !== null && net !== own) return pid;
    queue.push(...childrenOf(pid));
  }
  return null;
}

/**
 * Lowers `ip_unprivileged_port_start` to `port` in the network namespace of the sandbox that
 * the process `root` (bwrap, or a shell that runs it) starts; resolves when done, or rejects
 * saying why not (the forwarder then leaves that port unforwarded).
 */
export async function lowerPortFloor(root: number, port: number, nsenter: string): Promise<void> {
  for (let tries = 1;; tries++) {
    let pid: number | null = null;
    for (let waited = 0; (pid = inOtherNet(root)) === null; waited += POLL_MS) {
      if (waited >= APPEAR_MS || namespaceOf(root, "net") === null) {
        throw new Error("the sandbox's network namespace did not appear");
      }
      await new Promise((resolve) => setTimeout(resolve, POLL_MS));
    }
    try {
      return await setFloor(pid, port, nsenter);
    } catch (e) {
      // bwrap was still entering its inner user namespace, or the kernel had no descriptor
      // free for nsenter a moment ago: tried again within the forwarder's wait
      if (tries >= RETRIES) throw e;
      await new Promise((resolve) => setTimeout(resolve, RETRY_MS));
    }
  }
}

/** Writes `port` as the floor of the network namespace `pid` is in. */
async function setFloor(pid: number, port: number, nsenter: string): Promise<void> {
  // the user namespace owning the network namespace: bwrap's outer one, or the process's own
  // (entered too when it is not the kernel's), or none (a root kernel's sandbox is in its own)
  const outer = outerUserns(pid);
  try {
    const user = outer !== null
      ? [`--user=${outer.path}`, "--preserve-credentials"]
      : namespaceOf(pid, "user") === namespaceOf("self", "user")
      ? []
      : [`--user=/proc/${pid}/ns/user`, "--preserve-credentials"];
    const out = await new Deno.Command(nsenter, {
      args: [
        ...user,
        `--net=/proc/${pid}/ns/net`,
        "--",
        PERL,
        "-e",
        'open(my $f, ">", "/proc/sys/net/ipv4/ip_unprivileged_port_start") or die "$!\\n"; ' +
        'print {$f} "$ARGV[0]\\n"; close($f) or die "$!\\n"',
        String(port),
      ],
      clearEnv: true,
      stdin: "null",
      stdout: "null",
      stderr: "piped",
    }).output();
    if (!out.success) {
      throw new Error(
        `cannot lower the sandbox's port floor: ${new TextDecoder().decode(out.stderr).trim()}`,
      );
    }
  } finally {
    outer?.close();
  }
}

/**
 * Lowers the floor of the sandbox just spawned under `root` to `floor` (its `portFloor`), if any
 * and `nsenter` is known (a sandboxed run);
 * resolves once done or failed: a failure leaves those ports refused inside (EACCES), and a
 * forwarder waiting for one leaves it unforwarded.
 */
export async function lowerFloorOf(
  root: number,
  floor: number | null,
  nsenter: string | undefined,
): Promise<void> {
  if (floor !== null && nsenter) await lowerPortFloor(root, floor, nsenter).catch(() => {});
}
