/** How a proxied sandbox's command line starts its forwarder first (P-NET-1). */
import type { SandboxNet } from "./destinations.ts";
import { FORWARDER_SCRIPT } from "./forwarder_script.ts";
import { proxyEnv } from "./proxy_env.ts";

/** Where the directory holding the proxy's Unix socket is bound (read-only) inside a sandbox. */
export const NET_MOUNT = "/dev/shoal-net";

/** The name of the proxy's Unix socket in its directory. */
export const PROXY_SOCKET = "proxy";

/** The perl that runs the forwarder (perl-base is Essential on Debian; /usr is in every view). */
const PERL = "/usr/bin/perl";

/** The argv that runs `argv` inside a sandbox with `net`, its forwarder listening first. */
export function forwardedCommand(net: SandboxNet, argv: readonly string[]): string[] {
  return [
    PERL,
    "-e",
    FORWARDER_SCRIPT,
    `${NET_MOUNT}/${PROXY_SOCKET}`,
    `P:${net.port}`,
    ...net.forwards.map((f) => `L:${f.listen}|${f.port}|${f.host}`),
    ...proxyEnv(net.port).map(([name, value]) => `E:${name}=${value}`),
    "--",
    ...argv,
  ];
}
