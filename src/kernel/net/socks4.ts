/**
 * SOCKS4 and SOCKS4a, which the proxy does not speak (P-NET-1: HTTP and SOCKS5): a client of
 * either (`curl --socks4`) sends its request and waits for an 8-byte reply, which the proxy gives
 * at once, "rejected", instead of reading on for an HTTP head that never comes until its
 * handshake limit closes the connection.
 */
import { type Head, writeAll } from "./relay.ts";

/** SOCKS4's reply "request rejected or failed". */
const REJECTED = new Uint8Array([0, 91, 0, 0, 0, 0, 0, 0]);

/**
 * Answers the SOCKS4 request `head` starts (its first byte 4) with reply 91 once it is read to its
 * end: its 8 fixed bytes, its user id ended by a NUL and, for SOCKS4a (address 0.0.0.x, x not 0),
 * its name ended by a NUL; nothing when the client leaves or the request passes the head limit.
 */
export async function rejectSocks4(client: Deno.Conn, head: Head): Promise<void> {
  if (!(await head.fill(8))) return;
  const [, , , , a, b, c, d] = head.buf;
  const named = a === 0 && b === 0 && c === 0 && d !== 0;
  let at = 8;
  for (let ends = named ? 2 : 1; ends > 0; ends--) {
    // each byte looked at once, however the request comes in pieces
    while (head.buf.indexOf(0, at) < 0) {
      at = head.buf.length;
      if (!(await head.fill(at + 1))) return;
    }
    at = head.buf.indexOf(0, at) + 1;
  }
  await writeAll(client, REJECTED);
}
