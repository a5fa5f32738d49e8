/** How a proxied sandbox's command line starts its forwarder first (P-NET-1). */
import type { SandboxNet } from "./destinations.ts";
import { forwarderScript } from "./forwarder_script.ts";
import { NET_MOUNT, PERL, PROXY_SOCKET, RELAY_NAME } from "./inside.ts";
import { proxyEnv } from "./proxy_env.ts";

/**
 * How the forwarder confines what it runs (`forwarder_script.ts`): the perl defining `set_limit`
 * and `install_filter`, and their arguments.
 */
export interface ForwarderConfinement {
  perl: string;
  /** The process limit's spec (`set_limit`). */
  limit: string;
  /** prctl(2)'s and seccomp(2)'s numbers and the filter in hex (`install_filter`). */
  filter: readonly [number, number, string];
}

/**
 * The argv that runs `argv` inside a sandbox with `net` under the process limit and socket filter
 * of `confine`, its forwarder listening first: the forwarder sets both itself.
 */
export function forwardedCommand(
  net: SandboxNet,
  argv: readonly string[],
  confine: ForwarderConfinement,
): string[] {
  return [
    PERL,
    "-e",
    forwarderScript(confine.perl),
    `${NET_MOUNT}/${PROXY_SOCKET}`,
    `P:${net.port}`,
    ...net.forwards.map((f) => `L:${f.listen}|${f.port}|${f.host}`),
    ...proxyEnv(net.port).map(([name, value]) => `E:${name}=${value}`),
    `F:${confine.filter.join(":")}`,
    `R:${confine.limit}`,
    `N:${RELAY_NAME}`,
    "--",
    ...argv,
  ];
}
