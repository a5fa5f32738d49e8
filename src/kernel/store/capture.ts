import { createHash, type Hash } from "node:crypto";
import { closeSync, rmSync } from "node:fs";
import { concatBytes } from "../../protocol/concat_bytes.ts";
import { CAPTURE_CAP, JSON_PARSE_LIMIT } from "../../protocol/limits.ts";
import type { BlobInfo, Captured } from "./blob_info.ts";
import type { Cas } from "./cas.ts";
import { readAtSync, writeFully } from "./fd_io.ts";
import { FREE_CHECK_BYTES, spaceShortage } from "./free_space.ts";
import { stateDirFailure } from "./state_dir_failure.ts";
import { Utf8Scanner } from "./utf8_scanner.ts";

/**
 * Output up to this many bytes is held in memory and stored by `finish()` as one CAS blob, so a
 * short exec's output costs no spool file (create, write, read back, rename) (issue 10).
 */
export const HELD_OUTPUT_LIMIT = 64 * 1024;

/**
 * Captures one output stream of an exec (K-BASH-11/12): chunks are hashed and scanned as they
 * come; the first {@link HELD_OUTPUT_LIMIT} bytes are held in memory, and a stream that grows
 * beyond them is appended to a 0600 spool file under `tmp/` from then on, so memory stays bounded
 * whatever the output size. `finish()` stores held output as a CAS blob, or reads a spool of at
 * most 16 MiB back (for JSON conversion) and moves it into the CAS. Callers MUST await each `write` before the next one.
 * Spool I/O is synchronous: page-cache writes of one pipe read each are quicker than the I/O
 * thread pool's round trips, which dominated a short exec's time on a loaded machine (issue 10).
 * A failed spool write (a full disk), or one that would leave less free space than the kernel
 * leaves to other programs (`free_space.ts`), removes the spool and discards the rest of the
 * stream, so the producer is still drained; `finish()` then rejects with that failure.
 */
export class CaptureSink {
  #written = 0;
  #truncated = false;
  #writing = false;
  /**
   * The stored blob, once `finish()` began. Only the blob: the bytes read back went to that
   * call alone, since a sink lives as long as its task is retained (K-TASK-2, for `task.output`)
   * and the whole stdout held here (up to 16 MiB a stream) stayed in memory with it.
   */
  #finishing: Promise<BlobInfo> | null = null;
  /** Why the spool could not be written, once that happened. */
  #failure: unknown = null;
  readonly #hash: Hash = createHash("sha256");
  readonly #scanner = new Utf8Scanner();

  /** Output held in memory while it stays within {@link HELD_OUTPUT_LIMIT} (copies). */
  #held: Uint8Array[] = [];
  /** The spool file, created once the output passes {@link HELD_OUTPUT_LIMIT}, and its path. */
  #fd: number | null = null;
  #spoolPath: string | null = null;
  /** The spooled size at which the free space is looked at next ({@link spaceShortage}). */
  #nextSpaceCheck = 0;

  private constructor(private readonly cas: Cas, private readonly cap: number) {}

  /** Opens a sink spooling to a fresh file; `cap` defaults to 4 GiB (tests pass a smaller one). */
  static open(cas: Cas, cap = CAPTURE_CAP): Promise<CaptureSink> {
    return Promise.resolve(new CaptureSink(cas, cap));
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
    if (chunk.length === 0 || this.#failure !== null) return;
    this.#writing = true;
    try {
      this.#hash.update(chunk);
      this.#scanner.push(chunk);
      try {
        if (this.#fd === null && this.#written + chunk.length <= HELD_OUTPUT_LIMIT) {
          this.#held.push(chunk.slice());
        } else {
          if (this.#written + chunk.length >= this.#nextSpaceCheck) {
            const shortage = spaceShortage(this.cas.tmpDir, chunk.length);
            if (shortage !== null) throw new Error(shortage);
            this.#nextSpaceCheck = this.#written + chunk.length + FREE_CHECK_BYTES;
          }
          if (this.#fd === null) this.#spill();
          writeFully(this.#fd!, chunk, this.#written);
        }
      } catch (e) {
        this.#failure = e;
        this.#dropSpool();
        return;
      }
      this.#written += chunk.length;
      // The write is done; the flag stays up until the caller has been answered.
      await Promise.resolve();
    } finally {
      this.#writing = false;
    }
  }

  /** Bytes `[offset, offset + length)` captured so far (clamped), while running or after finish. */
  async readRange(offset: number, length: number): Promise<Uint8Array> {
    if (this.#finishing) {
      let blob;
      try {
        blob = await this.#finishing;
      } catch (e) {
        // Named as the run's own failure was: a bare "No space left on device" named nothing.
        throw stateDirFailure(this.cas.stateDir, "the output", this.#failure ?? e);
      }
      return await this.cas.readRange(blob.hash, offset, length);
    }
    const n = Math.max(0, Math.min(length, this.#written - offset));
    if (n === 0) return new Uint8Array(0);
    if (this.#fd === null) return this.#heldBytes().slice(offset, offset + n);
    return readAtSync(this.#fd, offset, n);
  }

  /**
   * Closes the spool, moves it into the CAS and describes the blob, with the bytes read back for
   * JSON conversion. A later call describes the same blob without bytes (null).
   */
  finish(): Promise<Captured> {
    if (this.#finishing) return this.#finishing.then((blob) => ({ blob, bytes: null }));
    const captured = Promise.resolve().then(() => this.#finish());
    this.#finishing = captured.then(({ blob }) => blob);
    this.#finishing.catch(() => {});
    return captured;
  }

  /** Drops the spool without storing it (the exec failed before producing a result). */
  abort(): Promise<void> {
    if (this.#finishing) return Promise.resolve();
    this.#finishing = Promise.reject(new Error("capture aborted"));
    this.#finishing.catch(() => {});
    this.#dropSpool();
    return Promise.resolve();
  }

  /** The held output as one array. */
  #heldBytes(): Uint8Array {
    if (this.#held.length > 1) this.#held = [concatBytes(this.#held)];
    return this.#held[0] ?? new Uint8Array(0);
  }

  /** Moves the held output into a new spool file, which takes the rest of the stream. */
  #spill(): void {
    // Made only now: most outputs never need a spool.
    const { path, fd } = this.cas.openStaging();
    this.#spoolPath = path;
    this.#fd = fd;
    writeFully(this.#fd, this.#heldBytes(), 0);
    this.#held = [];
  }

  /** Drops the held output, closes and removes the spool file, if any. */
  #dropSpool(): void {
    this.#held = [];
    if (this.#fd !== null) closeSync(this.#fd);
    this.#fd = null;
    if (this.#spoolPath !== null) rmSync(this.#spoolPath, { force: true });
  }

  #finish(): Captured {
    if (this.#failure !== null) throw this.#failure;
    let bytes: Uint8Array | null;
    let hash: string;
    if (this.#fd === null) {
      bytes = this.#heldBytes();
      this.#held = [];
      hash = this.cas.put(bytes);
    } else {
      bytes = this.#written <= JSON_PARSE_LIMIT ? readAtSync(this.#fd, 0, this.#written) : null;
      closeSync(this.#fd);
      hash = "sha256:" + this.#hash.digest("hex");
      this.cas.adopt(this.#spoolPath!, hash);
    }
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
