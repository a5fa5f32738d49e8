import { concatBytes } from "./concat_bytes.ts";
import { FRAME_LIMIT, NESTING_LIMIT, READ_CHUNK } from "./limits.ts";
import { decodeFrame, type IdRule, type Incoming, OVERSIZE_ERROR } from "./rpc.ts";

/** What a framer yields: one complete frame, or notice that an oversize frame was dropped. */
export type FrameEvent =
  | { kind: "frame"; bytes: Uint8Array }
  | { kind: "oversize" };

const NEWLINE = 0x0a;
const CR = 0x0d;

/**
 * Newline framer that never holds more than `limit` (+1 for a trailing CR) bytes of a frame:
 * an oversize frame is reported as soon as it crosses the limit and the rest of it, up to the
 * next newline, is discarded (W-FRAME-2..4). A frame that lies whole in one chunk is handed out
 * as a view of that chunk, uncopied: its bytes are valid until the caller reuses the chunk.
 */
export class LineFramer {
  #parts: Uint8Array[] = [];
  #size = 0;
  #discarding = false;

  constructor(readonly limit: number = FRAME_LIMIT) {}

  /** Bytes currently held for an unfinished frame. */
  get buffered(): number {
    return this.#size;
  }

  /** Feeds one chunk and returns the events it completes, in order. */
  push(chunk: Uint8Array): FrameEvent[] {
    const events: FrameEvent[] = [];
    let start = 0;
    while (start <= chunk.length) {
      const nl = chunk.indexOf(NEWLINE, start);
      const end = nl === -1 ? chunk.length : nl;
      if (this.#discarding) {
        if (nl !== -1) this.#discarding = false;
      } else if (nl !== -1 && this.#size === 0) {
        this.#frame(chunk.subarray(start, end), events);
      } else if (end > start || nl !== -1) {
        this.#append(chunk.subarray(start, end), events);
        if (nl !== -1 && !this.#discarding) this.#finish(events);
        else if (nl !== -1) this.#discarding = false;
      }
      if (nl === -1) break;
      start = nl + 1;
    }
    return events;
  }

  #append(piece: Uint8Array, events: FrameEvent[]): void {
    if (piece.length === 0) return;
    if (this.#size + piece.length > this.limit + 1) {
      this.#parts = [];
      this.#size = 0;
      this.#discarding = true;
      events.push({ kind: "oversize" });
      return;
    }
    // Copy: the caller may reuse its read buffer.
    this.#parts.push(piece.slice());
    this.#size += piece.length;
  }

  #finish(events: FrameEvent[]): void {
    const bytes = this.#parts.length === 1 ? this.#parts[0] : concatBytes(this.#parts);
    this.#parts = [];
    this.#size = 0;
    this.#frame(bytes, events);
  }

  /** Reports the line `bytes` (its newline taken off) as a frame, if it is one. */
  #frame(bytes: Uint8Array, events: FrameEvent[]): void {
    if (bytes.length > 0 && bytes[bytes.length - 1] === CR) {
      bytes = bytes.subarray(0, bytes.length - 1);
    }
    if (bytes.length > this.limit) {
      events.push({ kind: "oversize" });
      return;
    }
    if (bytes.length > 0) events.push({ kind: "frame", bytes });
  }
}

/** A byte source such as a socket or `Deno.stdin`. */
export interface ByteReader {
  read(p: Uint8Array): Promise<number | null>;
}

/**
 * The one read loop of every connection (kernel socket, RPC client, facade stdin): bounded
 * frames decoded by `rule` (nesting at most `nesting` levels), yielded as the batch that one read of `source` completed (never
 * empty); an oversize frame comes out as an invalid message carrying the W-FRAME-4/5 error with
 * id null. One read buffer is reused: the framer copies what it keeps.
 */
export async function* readMessageBatches(
  source: ByteReader,
  rule: IdRule,
  nesting: number = NESTING_LIMIT,
): AsyncGenerator<Incoming[]> {
  const framer = new LineFramer();
  const buf = new Uint8Array(READ_CHUNK);
  while (true) {
    const n = await source.read(buf);
    if (n === null) return;
    const events = framer.push(buf.subarray(0, n));
    if (events.length === 0) continue;
    yield events.map((event) =>
      event.kind === "oversize"
        ? { kind: "invalid", id: null, error: OVERSIZE_ERROR }
        : decodeFrame(event.bytes, rule, nesting)
    );
  }
}

/** {@link readMessageBatches} one message at a time. */
export async function* readMessages(source: ByteReader, rule: IdRule): AsyncGenerator<Incoming> {
  for await (const batch of readMessageBatches(source, rule)) yield* batch;
}
