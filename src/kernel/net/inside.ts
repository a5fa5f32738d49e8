/** Where a proxied sandbox finds the kernel's proxy (P-NET-1): paths inside its view. */

/** Where the directory holding the proxy's Unix socket is bound (read-only) inside a sandbox. */
export const NET_MOUNT = "/dev/shoal-net";

/** The name of the proxy's Unix socket in its directory. */
export const PROXY_SOCKET = "proxy";

/** The name of the ssh ProxyCommand script ({@link CONNECT_SCRIPT}) in the same directory. */
export const CONNECT_FILE = "connect";

/** The perl that runs the forwarder and the connect script (perl-base is Essential on Debian). */
export const PERL = "/usr/bin/perl";

/**
 * The process name of a proxied sandbox's relay (`forwarder_script.ts`), not `perl`: an agent's
 * `pkill perl` or `killall perl`, cleaning up its own scripts, would end it, and with it every
 * connection of that sandbox to the proxy and its forwarded ports (15 bytes, the most a name holds).
 */
export const RELAY_NAME = "shoal-net-relay";
