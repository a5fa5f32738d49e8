/**
 * What the facade and `shoal-kernel connect` agree on: the facade of a release holds no `net`
 * permission (M-PERM-3), so it reaches the kernel socket through this kernel subcommand, which
 * copies bytes between its stdio and the socket.
 */

/** The kernel subcommand that relays its stdin and stdout to the kernel socket. */
export const RELAY_COMMAND = "connect";

/** Exit status of the relay when nothing listens on the socket (autostart may help). */
export const RELAY_UNREACHABLE = 4;

/** The one stderr line the relay writes once connected; it relays nothing before it. */
export function relayConnectedLine(path: string): string {
  return `shoal-kernel: connected ${path}`;
}

/** Whether a connect error means that no kernel listens on the path (no socket or no listener). */
export function isUnreachable(e: unknown): boolean {
  return e instanceof Deno.errors.NotFound || e instanceof Deno.errors.ConnectionRefused;
}

/** Why connecting to `path` failed when nothing listens there (M-START-3), whoever connected. */
export function unreachableReason(path: string, e: unknown): string {
  return `no kernel is listening on ${path} (${e instanceof Error ? e.message : String(e)})`;
}
