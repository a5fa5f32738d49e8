import { FRAME_LIMIT } from "./limits.ts";

/** What a framer yields: one complete frame, or notice that an oversize frame was dropped. */
export type FrameEvent =
  | { kind: "frame"; bytes: Uint8Array }
  | { kind: "oversize" };

const NEWLINE = 0x0a;
const CR = 0x0d;

/**
 * Newline framer that never holds more than `limit` (+1 for a trailing CR) bytes of a frame:
 * an oversize frame is reported as soon as it crosses the limit and the rest of it, up to the
 * next newline, is discarded (W-FRAME-2..4).
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
    let bytes: Uint8Array;
    if (this.#parts.length === 1) bytes = this.#parts[0];
    else {
      bytes = new Uint8Array(this.#size);
      let at = 0;
      for (const p of this.#parts) {
        bytes.set(p, at);
        at += p.length;
      }
    }
    this.#parts = [];
    this.#size = 0;
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

/** Reads a byte stream as frame events, bounded by `limit` per frame. */
export async function* readFrames(
  source: AsyncIterable<Uint8Array>,
  limit: number = FRAME_LIMIT,
): AsyncGenerator<FrameEvent> {
  const framer = new LineFramer(limit);
  for await (const chunk of source) {
    for (const event of framer.push(chunk)) yield event;
  }
}
