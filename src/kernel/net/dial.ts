/**
 * How the proxy connects a granted destination (P-NET-1) and what it tells a client that it could
 * not: its addresses in turn, the next one started beside a slow one (RFC 8305's happy eyeballs),
 * each for at most {@link CONNECT_MS}, none started past {@link CONNECT_TOTAL_MS}, and every
 * failure said of its address.
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
 * How long an address is tried alone before the next is tried beside it (RFC 8305's 250 ms):
 * where IPv6 drops packets, every dual-stack name's first address never answers.
 */
const STAGGER_MS = 250;
/**
 * Most addresses of one destination tried at once: a name an agent's DNS gives hundreds of
 * addresses must not cost the kernel a descriptor for each.
 */
const RACING = 2;

/**
 * A connection to the first of `addresses` (IP addresses, IPv6 bare) that accepts on `port`: each
 * tried in turn for at most {@link CONNECT_MS} and none started after `deadline`
 * (`performance.now()` time), the next one started as soon as one fails or after
 * {@link STAGGER_MS} beside the one still trying (at most {@link RACING} at once), the first to
 * connect kept and any later one closed; else why, naming what each address did, in their order.
 */
export function connectFirst(
  addresses: readonly string[],
  port: number,
  deadline: number,
): Promise<Deno.TcpConn | Unreachable> {
  return new Promise((resolve) => {
    const failures: string[] = [];
    let next = 0, running = 0, notTried = 0, done = false, refused = true;
    let stagger: ReturnType<typeof setTimeout> | undefined;
    const finish = () => {
      if (done || running > 0 || next < addresses.length) return;
      done = true;
      const said = failures.slice(0, NAMED_FAILURES);
      if (failures.length > NAMED_FAILURES) said.push("…");
      if (notTried > 0) {
        said.push(
          `${notTried} more ${notTried === 1 ? "address" : "addresses"} not tried ` +
            `(${CONNECT_TOTAL_MS / 1000} s spent)`,
        );
      }
      resolve({ unreachable: said.join("; "), refused: refused && notTried === 0 });
    };
    const start = () => {
      clearTimeout(stagger);
      if (done || next >= addresses.length || running >= RACING) return finish();
      const left = Math.min(CONNECT_MS, deadline - performance.now());
      if (left < LEAST_TRY_MS) {
        notTried = addresses.length - next;
        next = addresses.length;
        return finish();
      }
      const i = next++;
      running++;
      // what dial did not foresee is this address's failure, never an attempt left running
      const attempt = dial(addresses[i], port, left).catch((e) => `${addresses[i]}: ${e}`);
      attempt.then((conn) => {
        running--;
        if (typeof conn !== "string") {
          if (done) conn.close();
          else {
            done = true;
            clearTimeout(stagger);
            resolve(conn);
          }
          return;
        }
        failures[i] = conn;
        refused &&= conn.endsWith("refused the connection");
        start();
      });
      if (next < addresses.length) stagger = setTimeout(start, STAGGER_MS);
    };
    start();
  });
}
