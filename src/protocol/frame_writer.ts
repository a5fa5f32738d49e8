/** Where whole frames are written: a socket or a stdout stream. */
export interface ByteWriter {
  write(p: Uint8Array): Promise<number>;
}

/**
 * Serializes writes so each frame goes out whole, never interleaved with another (W-FRAME-8).
 * A failed write rejects that frame's promise and every later one.
 */
export class FrameWriter {
  #tail: Promise<void> = Promise.resolve();
  #failed: unknown = null;

  constructor(private readonly out: ByteWriter) {}

  /** Queues `bytes` behind earlier frames; resolves once all of them are written. */
  write(bytes: Uint8Array): Promise<void> {
    const next = this.#tail.then(async () => {
      if (this.#failed !== null) throw this.#failed;
      try {
        let at = 0;
        while (at < bytes.length) at += await this.out.write(bytes.subarray(at));
      } catch (e) {
        this.#failed = e;
        throw e;
      }
    });
    this.#tail = next.catch(() => {});
    return next;
  }

  /** Resolves once every queued frame has been written or has failed. */
  flushed(): Promise<void> {
    return this.#tail;
  }
}
