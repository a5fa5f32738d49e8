import { concatBytes } from "./concat_bytes.ts";

/** Where whole frames are written: a socket or a stdout stream. */
export interface ByteWriter {
  write(p: Uint8Array): Promise<number>;
  /** Writes what it can of `p` at once, without waiting; returns how many bytes that was. */
  writeNow?(p: Uint8Array): number;
}

/** Most bytes of frames gathered into one write (a single larger frame is written alone). */
const GATHER_LIMIT = 64 * 1024;

/**
 * Serializes writes so each frame goes out whole, never interleaved with another (W-FRAME-8).
 * Frames queued while an earlier write is in flight, or within one turn of the event loop, are
 * written together by one call (up to {@link GATHER_LIMIT} bytes): a burst of notifications costs
 * one system call and one wake-up of the reader instead of one per frame. A failed write rejects
 * that frame's promise and every later one.
 */
export class FrameWriter {
  #tail: Promise<void> = Promise.resolve();
  #failed: unknown = null;
  /** Frames of the batch not yet started, and the promise settling once it is written. */
  #frames: Uint8Array[] = [];
  #bytes = 0;
  #batch: Promise<void> | null = null;

  constructor(private readonly out: ByteWriter) {}

  /** Queues `bytes` behind earlier frames; resolves once all of them are written. */
  write(bytes: Uint8Array): Promise<void> {
    if (this.#batch === null || this.#bytes + bytes.length > GATHER_LIMIT) {
      this.#frames = [];
      this.#bytes = 0;
      const frames = this.#frames;
      const batch = this.#tail.then(() => this.#writeBatch(frames));
      this.#batch = batch;
      this.#tail = batch.catch(() => {});
    }
    this.#frames.push(bytes);
    this.#bytes += bytes.length;
    return this.#batch;
  }

  /** Resolves once every queued frame has been written or has failed. */
  flushed(): Promise<void> {
    return this.#tail;
  }

  /** Writes a batch; settles within the call when the writer took all of it at once. */
  #writeBatch(frames: Uint8Array[]): void | Promise<void> {
    if (this.#frames === frames) this.#batch = null;
    if (this.#failed !== null) throw this.#failed;
    const bytes = frames.length === 1 ? frames[0] : concatBytes(frames);
    let at = 0;
    try {
      at = this.out.writeNow?.(bytes) ?? 0;
    } catch (e) {
      this.#failed = e;
      throw e;
    }
    if (at < bytes.length) return this.#writeRest(bytes, at);
  }

  async #writeRest(bytes: Uint8Array, at: number): Promise<void> {
    try {
      while (at < bytes.length) at += await this.out.write(bytes.subarray(at));
    } catch (e) {
      this.#failed = e;
      throw e;
    }
  }
}
