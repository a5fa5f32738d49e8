import { concatBytes } from "./concat_bytes.ts";

/** Where whole frames are written: a socket or a stdout stream. */
export interface ByteWriter {
  write(p: Uint8Array): Promise<number>;
  /** Writes what it can of `p` at once, without waiting; returns how many bytes that was. */
  writeNow?(p: Uint8Array): number;
}

/** Most bytes of frames gathered into one write (a single larger frame is written alone). */
const GATHER_LIMIT = 64 * 1024;

const WRITTEN: Promise<void> = Promise.resolve();

/**
 * Serializes writes so each frame goes out whole, never interleaved with another (W-FRAME-8).
 * A writer that writes synchronously (`writeNow`: the facade's stdout) is given a frame at once
 * when nothing is queued before it, within the call and without a promise. Otherwise frames
 * queued while an earlier write is in flight, or within one turn of the event loop, are written
 * together by one call (up to {@link GATHER_LIMIT} bytes): a burst costs one system call and one
 * wake-up of the reader instead of one per frame. A failed write rejects that frame's promise
 * and every later one.
 */
export class FrameWriter {
  #tail: Promise<void> = Promise.resolve();
  #failed: unknown = null;
  /** Frames of the batch not yet started, and the promise settling once it is written. */
  #frames: Uint8Array[] = [];
  #bytes = 0;
  #batch: Promise<void> | null = null;
  /** Batches queued and not yet settled. */
  #queued = 0;

  /**
   * @param out where frames go
   * @param startAtOnce whether a frame written while nothing is queued starts its write within
   *   the call rather than in a microtask with the frames of the same turn: a client's request
   *   then leaves before whatever else the turn starts (such as the next read of its input)
   */
  constructor(private readonly out: ByteWriter, private readonly startAtOnce = false) {}

  /** Queues `bytes` behind earlier frames; resolves once all of them are written. */
  write(bytes: Uint8Array): Promise<void> {
    return this.put(bytes) ?? WRITTEN;
  }

  /**
   * {@link write}, but returns nothing when `bytes` were written within the call (a `writeNow`
   * writer took all of them, nothing being queued before them), so that a caller pays for a
   * promise only when a write has to wait.
   */
  put(bytes: Uint8Array): Promise<void> | undefined {
    if (this.#queued === 0 && (this.out.writeNow !== undefined || this.startAtOnce)) {
      if (this.#failed !== null) return Promise.reject(this.#failed);
      let at = 0;
      try {
        at = this.out.writeNow?.(bytes) ?? 0;
      } catch (e) {
        this.#failed = e;
        return Promise.reject(e);
      }
      if (at === bytes.length) return undefined;
      if (this.startAtOnce) return this.#track(this.#writeRest(bytes, at));
      bytes = bytes.subarray(at);
    }
    if (this.#batch === null || this.#bytes + bytes.length > GATHER_LIMIT) {
      this.#frames = [];
      this.#bytes = 0;
      const frames = this.#frames;
      this.#batch = this.#track(this.#tail.then(() => this.#writeBatch(frames)));
    }
    this.#frames.push(bytes);
    this.#bytes += bytes.length;
    return this.#batch;
  }

  /** Counts `write` as queued until it settles, and queues later frames behind it. */
  #track(write: Promise<void>): Promise<void> {
    this.#queued++;
    const settled = () => {
      this.#queued--;
    };
    this.#tail = write.then(settled, settled);
    return write;
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
