/** How a proxied sandbox's command line starts its forwarder first (P-NET-1). */
import type { SandboxNet } from "./destinations.ts";
import { FORWARDER_SCRIPT } from "./forwarder_script.ts";
import { NET_MOUNT, PERL, PROXY_SOCKET, RELAY_NAME } from "./inside.ts";
import { proxyEnv } from "./proxy_env.ts";

/**
 * The argv that runs `argv` inside a sandbox with `net`, its forwarder listening first; `prctl` is
 * prctl(2)'s syscall number, by which the forwarder's relay makes itself undumpable.
 */
export function forwardedCommand(
  net: SandboxNet,
  argv: readonly string[],
  prctl: number,
): string[] {
  return [
    PERL,
    "-e",
    FORWARDER_SCRIPT,
    `${NET_MOUNT}/${PROXY_SOCKET}`,
    `P:${net.port}`,
    ...net.forwards.map((f) => `L:${f.listen}|${f.port}|${f.host}`),
    ...proxyEnv(net.port).map(([name, value]) => `E:${name}=${value}`),
    `D:${prctl}`,
    `N:${RELAY_NAME}`,
    "--",
    ...argv,
  ];
}
