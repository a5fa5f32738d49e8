/**
 * The proxy's relaying of bytes (P-NET-1): bounded head reads, the copying both ways of a
 * connection it let through, and what it changes in the answer to a request it forwarded.
 */

/** The longest HTTP request head, SOCKS5 handshake or forwarded answer's head the proxy reads. */
export const HEAD_LIMIT = 16 * 1024;
/** A relayed connection one end has ended, with no byte either way for this long, is closed. */
const IDLE_MS = 10 * 60_000;
const RELAY_CHUNK = 128 * 1024;

/** Buffered reads of a connection's first bytes, bounded by {@link HEAD_LIMIT}. */
export class Head {
  /** Where bytes are read to: grown by doubling, so a head sent a byte at a time is copied O(n). */
  #store = new Uint8Array(0);
  #length = 0;
  constructor(private readonly conn: Deno.Conn) {}

  /** The buffered bytes (a view, valid until the next fill or take). */
  get buf(): Uint8Array {
    return this.#store.subarray(0, this.#length);
  }

  /** Reads until at least `n` bytes are buffered; false at EOF or past the limit. */
  async fill(n: number): Promise<boolean> {
    if (n > HEAD_LIMIT) return false;
    while (this.#length < n) {
      if (this.#length === this.#store.length) {
        const grown = new Uint8Array(Math.min(HEAD_LIMIT, Math.max(4096, 2 * this.#length)));
        grown.set(this.buf);
        this.#store = grown;
      }
      const got = await this.conn.read(this.#store.subarray(this.#length));
      if (got === null) return false;
      this.#length += got;
    }
    return true;
  }

  /** Takes the first `n` buffered bytes. */
  take(n: number): Uint8Array {
    const taken = this.#store.slice(0, n);
    this.#store.copyWithin(0, n, this.#length);
    this.#length -= n;
    return taken;
  }
}

export async function writeAll(conn: Deno.Conn, bytes: Uint8Array): Promise<void> {
  for (let off = 0; off < bytes.length;) off += await conn.write(bytes.subarray(off));
}

export function closeQuietly(conn: Deno.Conn | null): void {
  try {
    conn?.close();
  } catch {
    // closed already
  }
}

/** Longest a client the proxy answered without connecting may go on sending before it is closed. */
const LINGER_MS = 5_000;

/**
 * Ends a connection the proxy answered itself (a refusal, a 400): its answer is followed by the
 * end of what the proxy sends, and what the client still sends (the body of a refused POST) is
 * read and dropped until the client closes, for at most {@link LINGER_MS}. Closed at once with
 * that body unread, the Unix socket reports a reset to the sandbox's forwarder, whose close of the
 * client's TCP connection with bytes unread then resets it too, and the client's kernel throws
 * the answer away with it.
 */
export async function linger(client: Deno.Conn): Promise<void> {
  const timer = setTimeout(() => closeQuietly(client), LINGER_MS);
  try {
    await client.closeWrite();
    const sink = new Uint8Array(64 * 1024);
    while ((await client.read(sink)) !== null) {
      // dropped
    }
  } catch {
    // closed: at the limit, or by the client
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Where the blank line ending an HTTP head starts in `bytes`, or -1, looking from `from` on: the
 * caller passes where its last look ended (less 3), so a head sent a byte at a time is scanned
 * once, not once per byte.
 */
export function headEnd(bytes: Uint8Array, from: number): number {
  for (let i = Math.max(0, from); i + 3 < bytes.length; i++) {
    if (bytes[i] === 13 && bytes[i + 1] === 10 && bytes[i + 2] === 13 && bytes[i + 3] === 10) {
      return i;
    }
  }
  return -1;
}

/**
 * `bytes` as text of one character per byte (U+0000 to U+00FF), which {@link bytesOf} turns back
 * into the same bytes: an HTTP head's field values and target may hold any byte past ASCII
 * (RFC 9110 obs-text), which a UTF-8 decoding would replace by U+FFFD.
 */
export function byteText(bytes: Uint8Array): string {
  let text = "";
  for (let at = 0; at < bytes.length; at += 8192) {
    text += String.fromCharCode(...bytes.subarray(at, at + 8192));
  }
  return text;
}

/** The bytes of a text of one character per byte ({@link byteText}). */
export function bytesOf(text: string): Uint8Array {
  return Uint8Array.from(text, (char) => char.charCodeAt(0));
}

/** Headers of a forwarded answer that {@link passAnswerHead} replaces by `Connection: close`. */
const ANSWER_HOP_HEADERS = /^(connection|keep-alive|proxy-connection):/i;

/**
 * Passes the head of a destination's answer to a request the proxy forwarded from `from` to `to`,
 * saying `Connection: close` (its own Connection, Keep-Alive and Proxy-Connection dropped),
 * interim 1xx answers as they came (and a 101's switch, with all that follows it): the proxy
 * sends one request to one destination per connection, so a client that kept the connection for
 * its next request (curl does, for each `http://` URL after the first) would send it to this
 * destination, whatever its URL named, and take this destination's answer for it; told that the
 * connection closes, it opens another, where the proxy judges that request on its own. What is
 * no HTTP/1.x head within {@link HEAD_LIMIT} passes as it came.
 */
async function passAnswerHead(from: Deno.Conn, to: Deno.Conn): Promise<void> {
  const head = new Head(from);
  for (let scanned = 0;;) {
    // what does not start as an HTTP answer (a greeting that waits for the client) passes as it
    // comes, never held for a head that does not end
    if (!"HTTP/".startsWith(byteText(head.buf.subarray(0, 5)))) break;
    const end = headEnd(head.buf, scanned - 3);
    if (end < 0) {
      scanned = head.buf.length;
      if (await head.fill(scanned + 1)) continue;
      break;
    }
    const lines = byteText(head.buf.subarray(0, end)).split("\r\n");
    // a 101 switches the connection to another protocol: what follows is not HTTP's to change
    if (!/^HTTP\/1\.[01] \d{3}/.test(lines[0]) || /^HTTP\/1\.[01] 101/.test(lines[0])) break;
    if (/^HTTP\/1\.[01] 1\d\d/.test(lines[0])) {
      await writeAll(to, head.take(end + 4));
      scanned = 0;
      continue;
    }
    head.take(end + 4);
    const kept = lines.filter((line, i) => i === 0 || !ANSWER_HOP_HEADERS.test(line));
    await writeAll(to, bytesOf([...kept, "Connection: close", "", ""].join("\r\n")));
    break;
  }
  if (head.buf.length > 0) await writeAll(to, head.take(head.buf.length));
}

/**
 * Copies `from` into `to` until EOF, then half-closes `to`; `activity` notes each chunk. With
 * `answer`, `from` is a destination answering a forwarded request ({@link passAnswerHead}).
 */
async function pump(
  from: Deno.Conn,
  to: Deno.Conn,
  activity: Activity,
  answer = false,
): Promise<void> {
  const buf = new Uint8Array(RELAY_CHUNK);
  try {
    if (answer) await passAnswerHead(from, to);
    while (true) {
      const n = await from.read(buf);
      if (n === null) break;
      activity.at = performance.now();
      await writeAll(to, buf.subarray(0, n));
    }
    await (to as Deno.TcpConn).closeWrite();
  } catch {
    // either side went away: the relay ends
  } finally {
    // the limit counts from here: what the pair said before the end is no idling after it
    activity.at = performance.now();
    activity.ended = true;
  }
}

/** When a relayed pair last carried a byte, and whether one of its directions has ended. */
interface Activity {
  at: number;
  ended: boolean;
}

/**
 * Relays a client and its upstream both ways until both ends close, or one has and the pair then
 * idles for `idleMs` (a destination that never ends what a finished client left half-open would
 * hold its share of the principal's connections for ever); `forwarded` when the upstream answers
 * a request the proxy forwarded (not a tunnel). A pair both ends hold is never closed for saying
 * nothing: an idle psql or ssh session through the proxy keeps its connection (P-NET-1).
 */
export async function relay(
  client: Deno.Conn,
  upstream: Deno.Conn,
  forwarded: boolean,
  idleMs = IDLE_MS,
): Promise<void> {
  const activity: Activity = { at: performance.now(), ended: false };
  const idle = setInterval(() => {
    if (activity.ended && performance.now() - activity.at > idleMs) {
      closeQuietly(client);
      closeQuietly(upstream);
    }
  }, Math.min(idleMs, 60_000));
  try {
    await Promise.all([
      pump(client, upstream, activity),
      pump(upstream, client, activity, forwarded),
    ]);
  } finally {
    clearInterval(idle);
  }
}
