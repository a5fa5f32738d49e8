/** Test support: in-memory byte streams for the facade's stdio transport (a fed reader, a slow writer). */
import assert from "node:assert/strict";

/** A byte source fed by the test; `end()` makes the next read report EOF. */
export class FeedReader {
  #chunks: Uint8Array[] = [];
  #ended = false;
  #wake: (() => void) | null = null;

  /** Queues bytes for the next reads. */
  feed(data: string | Uint8Array): void {
    this.#chunks.push(typeof data === "string" ? new TextEncoder().encode(data) : data);
    this.#wake?.();
  }

  /** Makes the next read after the queued bytes report EOF. */
  end(): void {
    this.#ended = true;
    this.#wake?.();
  }

  /** Reads queued bytes, waiting for some. */
  async read(p: Uint8Array): Promise<number | null> {
    while (this.#chunks.length === 0) {
      if (this.#ended) return null;
      await new Promise<void>((resolve) => this.#wake = resolve);
      this.#wake = null;
    }
    const chunk = this.#chunks[0];
    const n = Math.min(p.length, chunk.length);
    p.set(chunk.subarray(0, n));
    if (n === chunk.length) this.#chunks.shift();
    else this.#chunks[0] = chunk.subarray(n);
    return n;
  }
}

/** A byte sink that accepts at most `step` bytes per write and yields between writes. */
export class SlowWriter {
  bytes: number[] = [];
  fail = false;

  constructor(readonly step: number) {}

  /** Takes at most `step` bytes. */
  async write(p: Uint8Array): Promise<number> {
    await new Promise((resolve) => setTimeout(resolve, 0));
    if (this.fail) throw new Error("broken pipe");
    const n = Math.min(p.length, this.step);
    for (let i = 0; i < n; i++) this.bytes.push(p[i]);
    return n;
  }

  /** The frames written so far, parsed. */
  frames(): Record<string, unknown>[] {
    const text = new TextDecoder().decode(new Uint8Array(this.bytes));
    assert.ok(text === "" || text.endsWith("\n"), "output ends with a whole frame");
    return text.split("\n").filter((l) => l !== "").map((l) => JSON.parse(l));
  }
}
