/**
 * How the proxy connects a granted destination (P-NET-1) and what it tells a client that it could
 * not: each address in turn, each for at most {@link CONNECT_MS}, all of them for at most
 * {@link CONNECT_TOTAL_MS}, and every failure said of its address.
 */
import { within } from "../../protocol/within.ts";

/** Longest wait for one address of a destination to accept, and for a name's lookup. */
export const CONNECT_MS = 15_000;
/**
 * Longest time spent connecting a destination (its lookup and its addresses, one after another):
 * past it, the addresses left are not tried, and the client is told what each tried one did.
 */
export const CONNECT_TOTAL_MS = 30_000;
/** Least time an address is tried for: with less left, it is not tried. */
const LEAST_TRY_MS = 1_000;
/** Most addresses a "cannot connect" answer names, each with what it did. */
const NAMED_FAILURES = 4;
/** A granted destination the proxy could not connect: why, and whether every address refused. */
export interface Unreachable {
  unreachable: string;
  refused: boolean;
}

/**
 * Connects to `address:port` (an IP address, IPv6 bare) within `ms`; else what happened, said of
 * the address (`… refused the connection`, `… did not answer within 15 s`).
 */
async function dial(address: string, port: number, ms: number): Promise<Deno.TcpConn | string> {
  const attempt = Deno.connect({ hostname: address, port });
  try {
    const conn = await within(attempt, ms);
    if (conn === null) {
      attempt.then((c) => c.close(), () => {});
      return `${address} did not answer within ${Math.round(ms / 1000)} s`;
    }
    // relayed bytes go out as they come: Nagle's wait would add a delayed ACK's 40 ms per turn
    conn.setNoDelay(true);
    return conn;
  } catch (e) {
    if (e instanceof Deno.errors.ConnectionRefused) return `${address} refused the connection`;
    return `${address}: ${e instanceof Error ? e.message : String(e)}`;
  }
}

/**
 * A connection to the first of `addresses` (IP addresses, IPv6 bare) that accepts on `port`,
 * each tried for at most {@link CONNECT_MS} and none after `deadline` (`performance.now()`
 * time); else why, naming what each address did.
 */
export async function connectFirst(
  addresses: readonly string[],
  port: number,
  deadline: number,
): Promise<Deno.TcpConn | Unreachable> {
  const failures: string[] = [];
  let refused = true;
  for (const [i, address] of addresses.entries()) {
    const left = Math.min(CONNECT_MS, deadline - performance.now());
    if (left < LEAST_TRY_MS) {
      const more = addresses.length - i;
      failures.push(
        `${more} more ${more === 1 ? "address" : "addresses"} not tried ` +
          `(${CONNECT_TOTAL_MS / 1000} s spent)`,
      );
      refused = false;
      break;
    }
    const conn = await dial(address, port, left);
    if (typeof conn !== "string") return conn;
    refused &&= conn.endsWith("refused the connection");
    if (i < NAMED_FAILURES) failures.push(conn);
    else if (i === NAMED_FAILURES) failures.push("…");
  }
  return { unreachable: failures.join("; "), refused };
}
