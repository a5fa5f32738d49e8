/** How a proxied sandbox's command line starts its forwarder first (P-NET-1). */
import type { SandboxNet } from "./destinations.ts";
import { FORWARDER_SCRIPT } from "./forwarder_script.ts";
import { NET_MOUNT, PERL, PROXY_SOCKET, RELAY_NAME } from "./inside.ts";
import { proxyEnv } from "./proxy_env.ts";
import { filterArgs } from "../sandbox/unix_socket_filter.ts";

/**
 * The argv that runs `argv` inside a sandbox with `net` under the socket filter and the process
 * limit `limit` (`limitSpec` of `sandbox/process_limit.ts`), its forwarder listening first: the
 * forwarder sets both itself (`forwarder_script.ts`).
 */
export function forwardedCommand(
  net: SandboxNet,
  argv: readonly string[],
  limit: string,
): string[] {
  return [
    PERL,
    "-e",
    FORWARDER_SCRIPT,
    `${NET_MOUNT}/${PROXY_SOCKET}`,
    `P:${net.port}`,
    ...net.forwards.map((f) => `L:${f.listen}|${f.port}|${f.host}`),
    ...proxyEnv(net.port).map(([name, value]) => `E:${name}=${value}`),
    `F:${filterArgs().join(":")}`,
    `R:${limit}`,
    `N:${RELAY_NAME}`,
    "--",
    ...argv,
  ];
}
