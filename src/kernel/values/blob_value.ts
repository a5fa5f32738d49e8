import { ErrorCode, RpcError } from "../../protocol/errors.ts";
import { utf8Decoder } from "../../protocol/utf8.ts";
import { INLINE_VALUE_LIMIT } from "../../protocol/limits.ts";
import type { BlobInfo } from "../store/blob_info.ts";
import type { Cas } from "../store/cas.ts";
import { scalarSlice } from "./js_string.ts";

const decoder = utf8Decoder();

/**
 * A str or bytes value kept in the CAS (K-BASH-11): the byte window `[start, end)` of a blob,
 * always longer than INLINE_VALUE_LIMIT. Reads are lazy and bounded; nothing here loads the
 * whole payload.
 */
export class BlobValue {
  #lines: number | null;

  constructor(
    readonly cas: Cas,
    readonly kind: "str" | "bytes",
    readonly hash: string,
    readonly start: number,
    readonly end: number,
    /** Unicode scalars in the window (str only; 0 for bytes). */
    readonly scalars: number,
    lines: number | null,
  ) {
    this.#lines = lines;
  }

  /** A whole captured blob as a str (when valid UTF-8) or bytes value. */
  static whole(cas: Cas, blob: BlobInfo): BlobValue {
    const kind = blob.utf8 ? "str" : "bytes";
    return new BlobValue(cas, kind, blob.hash, 0, blob.len, blob.scalars, blob.lines);
  }

  /** Byte length of the window. */
  get len(): number {
    return this.end - this.start;
  }

  /**
   * Bytes `[offset, offset + length)` of the window, clamped to its end. A blob file cut short
   * under the kernel → -32004, as a deleted one: a short chunk would read as the end of the value.
   */
  async read(offset: number, length: number): Promise<Uint8Array> {
    const n = Math.max(0, Math.min(length, this.len - offset));
    const bytes = await this.cas.readRange(this.hash, this.start + offset, n);
    if (bytes.length < n) throw this.#cut();
    return bytes;
  }

  /** Streams bytes `[from, to)` of the window; a blob file cut short → -32004 (as {@link read}). */
  async *chunks(from = 0, to = this.len): AsyncGenerator<Uint8Array> {
    const end = this.start + Math.min(to, this.len);
    let pos = this.start + from;
    for await (const chunk of this.cas.stream(this.hash, pos, end)) {
      pos += chunk.length;
      yield chunk;
    }
    if (pos < end) throw this.#cut();
  }

  #cut(): RpcError {
    return new RpcError(ErrorCode.UNKNOWN_REF, "unknown blob", { hash: this.hash });
  }

  /** Number of `\n` bytes in the window (scanned once when not known). */
  async lineCount(): Promise<number> {
    if (this.#lines === null) {
      let n = 0;
      for await (const chunk of this.chunks()) {
        for (let j = chunk.indexOf(0x0a); j >= 0; j = chunk.indexOf(0x0a, j + 1)) n++;
      }
      this.#lines = n;
    }
    return this.#lines;
  }

  /** The first `k` scalars of a str window. */
  async headScalars(k: number): Promise<string> {
    const text = utf8Decoder().decode(await this.read(0, 4 * k), { stream: true });
    return scalarSlice(text, 0, k);
  }

  /** Scalars `[a, b)` of a str window, for `0 <= a <= b <= scalars`. */
  async scalarRange(a: number, b: number): Promise<string | BlobValue> {
    if (this.scalars === this.len) return asStr(await this.#window("str", a, b, b - a, null));
    let from = -1, to = this.len, lines = 0, seen = 0, pos = 0;
    scan: for await (const chunk of this.chunks()) {
      for (let i = 0; i < chunk.length; i++) {
        const byte = chunk[i];
        if ((byte & 0xc0) !== 0x80) {
          if (seen === a) from = pos + i;
          if (seen === b) {
            to = pos + i;
            break scan;
          }
          seen++;
        }
        if (byte === 0x0a && from >= 0) lines++;
      }
      pos += chunk.length;
    }
    if (from < 0) from = this.len;
    return asStr(await this.#window("str", from, to, b - a, lines));
  }

  /** Bytes `[a, b)` of the window, for `0 <= a <= b <= len`. */
  byteRange(a: number, b: number): Promise<Uint8Array | BlobValue> {
    return this.#window("bytes", a, b, 0, null);
  }

  async #window(
    kind: "str" | "bytes",
    from: number,
    to: number,
    scalars: number,
    lines: number | null,
  ): Promise<Uint8Array | BlobValue> {
    if (to - from <= INLINE_VALUE_LIMIT) return await this.read(from, to - from);
    return new BlobValue(
      this.cas,
      kind,
      this.hash,
      this.start + from,
      this.start + to,
      scalars,
      lines,
    );
  }
}

function asStr(window: Uint8Array | BlobValue): string | BlobValue {
  return window instanceof BlobValue ? window : decoder.decode(window);
}
