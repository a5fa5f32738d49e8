import { createHash, type Hash } from "node:crypto";
import { type FileHandle, open, unlink } from "node:fs/promises";
import { CAPTURE_CAP, JSON_PARSE_LIMIT } from "../../protocol/limits.ts";
import type { BlobInfo, Captured } from "./blob_info.ts";
import { type Cas, readAt } from "./cas.ts";
import { Utf8Scanner } from "./utf8_scanner.ts";

/**
 * Captures one output stream of an exec (K-BASH-11/12): chunks are appended to a 0600 spool file
 * under `tmp/` while being hashed and scanned, so memory stays bounded whatever the output size.
 * `finish()` reads a spool of at most 16 MiB back (for JSON conversion) and moves it into the CAS;
 * no copy of the stream is held while it runs. Callers MUST await each `write` before the next one.
 */
export class CaptureSink {
  #written = 0;
  #truncated = false;
  #writing = false;
  #pendingReads = new Set<Promise<unknown>>();
  #finishing: Promise<Captured> | null = null;
  readonly #hash: Hash = createHash("sha256");
  readonly #scanner = new Utf8Scanner();

  private constructor(
    private readonly cas: Cas,
    private readonly spoolPath: string,
    private readonly file: FileHandle,
    private readonly cap: number,
  ) {}

  /** Opens a sink with a fresh spool file; `cap` defaults to 4 GiB (tests pass a smaller one). */
  static async open(cas: Cas, cap = CAPTURE_CAP): Promise<CaptureSink> {
    const path = cas.tmpPath();
    const file = await open(path, "wx+", 0o600);
    return new CaptureSink(cas, path, file, cap);
  }

  /** Bytes captured so far (at most the cap). */
  get total(): number {
    return this.#written;
  }

  /** Whether bytes beyond the cap have been discarded. */
  get truncated(): boolean {
    return this.#truncated;
  }

  /** Appends a chunk; resolves once it is on disk. Bytes beyond the cap are discarded. */
  async write(chunk: Uint8Array): Promise<void> {
    if (this.#writing) throw new Error("CaptureSink.write called before the previous write ended");
    if (this.#finishing) throw new Error("CaptureSink.write called after finish");
    const room = this.cap - this.#written;
    if (chunk.length > room) {
      this.#truncated = true;
      chunk = chunk.subarray(0, room);
    }
    if (chunk.length === 0) return;
    this.#writing = true;
    try {
      this.#hash.update(chunk);
      this.#scanner.push(chunk);
      let done = 0;
      while (done < chunk.length) {
        const { bytesWritten } = await this.file.write(
          chunk,
          done,
          chunk.length - done,
          this.#written + done,
        );
        done += bytesWritten;
      }
      this.#written += chunk.length;
    } finally {
      this.#writing = false;
    }
  }

  /** Bytes `[offset, offset + length)` captured so far (clamped), while running or after finish. */
  async readRange(offset: number, length: number): Promise<Uint8Array> {
    if (this.#finishing) {
      const { blob } = await this.#finishing;
      return await this.cas.readRange(blob.hash, offset, length);
    }
    const n = Math.max(0, Math.min(length, this.#written - offset));
    if (n === 0) return new Uint8Array(0);
    const read = readAt(this.file, offset, n);
    this.#pendingReads.add(read);
    try {
      return await read;
    } finally {
      this.#pendingReads.delete(read);
    }
  }

  /** Closes the spool, moves it into the CAS and describes the blob. Idempotent. */
  finish(): Promise<Captured> {
    this.#finishing ??= this.#finish();
    return this.#finishing;
  }

  /** Drops the spool without storing it (the exec failed before producing a result). */
  async abort(): Promise<void> {
    if (this.#finishing) return;
    this.#finishing = Promise.reject(new Error("capture aborted"));
    this.#finishing.catch(() => {});
    await Promise.allSettled([...this.#pendingReads]);
    await this.file.close();
    await unlink(this.spoolPath).catch(() => {});
  }

  async #finish(): Promise<Captured> {
    await Promise.allSettled([...this.#pendingReads]);
    const bytes = this.#written <= JSON_PARSE_LIMIT
      ? await readAt(this.file, 0, this.#written)
      : null;
    await this.file.close();
    const hash = "sha256:" + this.#hash.digest("hex");
    await this.cas.adopt(this.spoolPath, hash);
    const scanner = this.#scanner;
    const utf8 = scanner.complete;
    const blob: BlobInfo = {
      hash,
      len: this.#written,
      utf8,
      scalars: utf8 ? scanner.scalars : 0,
      lines: scanner.lines,
      truncated: this.#truncated,
    };
    return { blob, bytes };
  }
}
