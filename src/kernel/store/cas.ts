import { createHash, randomBytes } from "node:crypto";
import { closeSync, existsSync, mkdirSync, openSync, renameSync, rmSync, statSync } from "node:fs";
import { mkdir, open, stat } from "node:fs/promises";
import { dirname, join } from "node:path";
import { ErrorCode, invalidParams, RpcError } from "../../protocol/errors.ts";
import type { Blanks } from "./blanks.ts";
import { writeFully } from "./fd_io.ts";
import { remakingParent } from "./remade_dir.ts";

const PREFIXED = /^sha256:[0-9a-f]{64}$/;
const BARE = /^[0-9a-fA-F]{64}$/;
const STREAM_CHUNK = 1024 * 1024;
/** How many second-level fan-out directories `cas/` can hold: 16 bits of hash. */
const FAN_OUT_DIRS = 1 << 16;
/** How many blobs the store remembers as sound (`Cas#sound`): ~0.5 MB. */
const SOUND_KEPT = 4096;

/** Whether a string names a blob: `sha256:<64 lowercase hex>` or bare 64 hex (K-BLOB-1). */
export function isHash(hash: string): boolean {
  return PREFIXED.test(hash) || BARE.test(hash);
}

/** The 64 lowercase hex digits named by `sha256:<64 lowercase hex>` or bare 64 hex; else -32602. */
export function parseHash(hash: string): string {
  if (!isHash(hash)) {
    throw invalidParams("hash must be sha256:<64 lowercase hex> or 64 hex digits", { hash });
  }
  return hash.slice(-64).toLowerCase();
}

/**
 * The content store under a state directory (J-4): blobs at `cas/<h0h1>/<h2h3>/<64 hex>`, written
 * to `tmp/` first and renamed into place. Files are 0600, directories 0700 (G-STATE-4).
 */
export class Cas {
  /** The state directory holding the store. */
  readonly stateDir: string;
  /** `<state>/cas`. */
  readonly casDir: string;
  /** `<state>/tmp`, on the same filesystem so spools can be renamed into `cas/`. */
  readonly tmpDir: string;

  /**
   * Fan-out directories known to exist, so a store skips their `mkdir`: bit `<h0h1h2h3>` for
   * `cas/<h0h1>/<h2h3>` (which implies its parent), 8 KiB whatever the store holds. A set of their
   * paths grew by a string of ~100 bytes for most new blobs, up to 65,536 of them (issue 33: 2,000
   * after 1,000 execs, 190 KiB of the kernel's heap, and still growing).
   */
  readonly #dirs = new Uint8Array(FAN_OUT_DIRS / 8);
  /**
   * Blobs (64 hex) whose file this kernel wrote or hashed, newest last. A file an earlier kernel
   * left may be torn (J-4 renames without syncing: a power cut can leave a blob's name on fewer
   * bytes, or on as many zeros): it is hashed before it is served, and replaced, not kept, when
   * its content is stored again. One let go is hashed again when next read.
   */
  readonly #sound = new Set<string>();
  /** Hashings of blob files under way ({@link #check}), by blob. */
  readonly #checking = new Map<string, Promise<void>>();
  /** Empty files and directories made ahead of need, when the kernel keeps them (issue 10). */
  #blanks: Blanks | null = null;

  private constructor(stateDir: string) {
    this.stateDir = stateDir;
    this.casDir = join(stateDir, "cas");
    this.tmpDir = join(stateDir, "tmp");
  }

  /**
   * Opens the store of a state directory, creating `cas/` and `tmp/` (0700) when missing. Throws
   * when they lie on two file systems (one a link elsewhere): no spool could be renamed into
   * place (J-4), and a kernel serving anyway ran every exec and then failed it, its output lost.
   */
  static async open(stateDir: string): Promise<Cas> {
    const cas = new Cas(stateDir);
    await mkdir(cas.casDir, { recursive: true, mode: 0o700 });
    await mkdir(cas.tmpDir, { recursive: true, mode: 0o700 });
    if ((await stat(cas.casDir)).dev !== (await stat(cas.tmpDir)).dev) {
      throw new Error(
        `${cas.casDir} and ${cas.tmpDir} are on different file systems: outputs are spooled in ` +
          "tmp/ and renamed into cas/ (G-STATE-2); move them back onto one file system, or " +
          "link the whole state directory elsewhere instead",
      );
    }
    return cas;
  }

  /** The file path of a blob (any form {@link parseHash} accepts). */
  blobPath(hash: string): string {
    const hex = parseHash(hash);
    return join(this.casDir, hex.slice(0, 2), hex.slice(2, 4), hex);
  }

  /**
   * A fresh, unused path under `tmp/` for a spool or staging file, `spool-<pid>-<random>`: a
   * killed kernel's spools are then the next one's to remove (blanks.ts), as its blanks are.
   */
  tmpPath(): string {
    return join(this.tmpDir, `spool-${Deno.pid}-${randomBytes(16).toString("hex")}`);
  }

  /** Takes new blobs' staging files and fan-out directories from `blanks` from now on. */
  useBlanks(blanks: Blanks): void {
    this.#blanks = blanks;
  }

  /**
   * An empty 0600 staging file under `tmp/`, opened for writing and reading: a blank when one is
   * ready, else a new file.
   */
  openStaging(): { path: string; fd: number } {
    const blank = this.#blanks?.file();
    if (blank) {
      try {
        return { path: blank, fd: openSync(blank, "r+") };
      } catch {
        // removed behind the pool's back: make one
      }
    }
    const path = this.tmpPath();
    return { path, fd: remakingParent(this.tmpDir, () => openSync(path, "wx+", 0o600)) };
  }

  /**
   * Stores a small payload (render texts and the like) and returns its `sha256:<hex>`. Synchronous:
   * for a few KiB, a few quick syscalls cost less than as many trips through the I/O thread pool.
   */
  put(bytes: Uint8Array): string {
    const hash = "sha256:" + createHash("sha256").update(bytes).digest("hex");
    if (this.#sound.has(hash.slice(7)) && holds(this.blobPath(hash), bytes.length)) return hash;
    const { path, fd } = this.openStaging();
    try {
      writeFully(fd, bytes);
    } catch (e) {
      rmSync(path, { force: true }); // a partial file (e.g. the disk filled up)
      throw e;
    } finally {
      closeSync(fd);
    }
    this.adopt(path, hash);
    return hash;
  }

  /**
   * Moves a finished spool file whose sha256 is `hash` into place (an existing blob is success).
   * A rename within one file system: synchronous, it never waits on data. When the blob exists the
   * spool is removed instead: renamed over it, ext4 would flush the spool to disk at once
   * (auto_da_alloc), milliseconds on a busy disk (issue 10). A file at the blob's name of another
   * length is not the blob ({@link holds}), nor is one of an earlier kernel not hashed since
   * ({@link #sound}): the spool replaces it.
   */
  adopt(spoolPath: string, hash: string): void {
    const target = this.blobPath(hash);
    const dir = dirname(target);
    const hex = parseHash(hash);
    try {
      if (this.#sound.has(hex) && holds(target, statSync(spoolPath).size)) {
        return rmSync(spoolPath, { force: true });
      }
      this.#ensureDir(dir, parseInt(hex.slice(0, 4), 16));
      try {
        renameSync(spoolPath, target);
      } catch (e) {
        // A fan-out directory removed behind the store's back: make it again, once.
        if ((e as NodeJS.ErrnoException).code !== "ENOENT") throw e;
        mkdirSync(dir, { recursive: true, mode: 0o700 });
        renameSync(spoolPath, target);
      }
    } catch (e) {
      rmSync(spoolPath, { force: true });
      if (!existsSync(target)) throw e;
    }
    this.#remember(hex);
  }

  /** Records a blob's file as sound, letting the oldest go beyond {@link SOUND_KEPT}. */
  #remember(hex: string): void {
    this.#sound.delete(hex);
    this.#sound.add(hex);
    if (this.#sound.size > SOUND_KEPT) this.#sound.delete(this.#sound.values().next().value!);
  }

  /**
   * Hashes the file of a blob not known sound, once for every caller meanwhile; one whose bytes
   * are not the blob's (torn) is removed, so the store holds no such blob (K-BLOB-3) until its
   * content is stored again.
   */
  #check(hex: string): Promise<void> {
    if (this.#sound.has(hex)) return Promise.resolve();
    let checking = this.#checking.get(hex);
    if (checking === undefined) {
      checking = this.#hashFile(hex).finally(() => this.#checking.delete(hex));
      this.#checking.set(hex, checking);
    }
    return checking;
  }

  async #hashFile(hex: string): Promise<void> {
    const path = this.blobPath(hex);
    let file;
    try {
      file = await open(path, "r");
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === "ENOENT") return;
      throw e;
    }
    const digest = createHash("sha256");
    let hashed;
    try {
      hashed = await file.stat();
      const buf = new Uint8Array(STREAM_CHUNK);
      for (let pos = 0;;) {
        const { bytesRead } = await file.read(buf, 0, buf.length, pos);
        if (bytesRead === 0) break;
        digest.update(buf.subarray(0, bytesRead));
        pos += bytesRead;
      }
    } finally {
      await file.close();
    }
    if (digest.digest("hex") === hex) return this.#remember(hex);
    // Not a sound copy stored meanwhile (renamed over the torn one while it was read).
    const now = statSync(path, { throwIfNoEntry: false });
    if (this.#sound.has(hex) || now?.ino !== hashed.ino || now.dev !== hashed.dev) return;
    rmSync(path, { force: true });
  }

  /**
   * Makes the fan-out directory `dir`, the `index`th (its 16 bits of hash), unless it is known to
   * exist, from a blank one when ready.
   */
  #ensureDir(dir: string, index: number): void {
    if (this.#knownDir(index)) return;
    if (!existsSync(dir)) {
      const parent = dirname(dir);
      if (!this.#knownParent(index) && !existsSync(parent)) this.#placeDir(parent);
      this.#placeDir(dir);
    }
    this.#dirs[index >> 3] |= 1 << (index & 7);
  }

  /** Whether the `index`th fan-out directory is known to exist. */
  #knownDir(index: number): boolean {
    return (this.#dirs[index >> 3] & (1 << (index & 7))) !== 0;
  }

  /** Whether the parent of the `index`th fan-out directory is known to exist: one of its 256 is. */
  #knownParent(index: number): boolean {
    const first = (index >> 8) << 5; // its 256 bits are 32 bytes
    return this.#dirs.subarray(first, first + 32).some((byte) => byte !== 0);
  }

  /** Renames a blank directory to `path`; when none is ready or the rename fails, makes one. */
  #placeDir(path: string): void {
    const blank = this.#blanks?.dir();
    if (blank) {
      try {
        return renameSync(blank, path);
      } catch {
        rmSync(blank, { recursive: true, force: true }); // another kernel made `path` first
      }
    }
    mkdirSync(path, { recursive: true, mode: 0o700 });
  }

  /** The byte length of a blob, or null when the store does not hold it. */
  async size(hash: string): Promise<number | null> {
    await this.#check(parseHash(hash));
    try {
      return (await stat(this.blobPath(hash))).size;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === "ENOENT") return null;
      throw e;
    }
  }

  /** Whether the store holds a blob. */
  async has(hash: string): Promise<boolean> {
    return (await this.size(hash)) !== null;
  }

  /** Bytes `[offset, offset + length)` of a blob, clamped to its end; unknown blob → -32004. */
  async readRange(hash: string, offset: number, length: number): Promise<Uint8Array> {
    const file = await this.#openBlob(hash);
    try {
      return await readAt(file, offset, length);
    } finally {
      await file.close();
    }
  }

  /** Streams bytes `[start, end)` of a blob (clamped to its end) in chunks; unknown → -32004. */
  async *stream(
    hash: string,
    start: number,
    end: number,
    chunkSize = STREAM_CHUNK,
  ): AsyncGenerator<Uint8Array> {
    const file = await this.#openBlob(hash);
    try {
      for (let pos = start; pos < end;) {
        const chunk = await readAt(file, pos, Math.min(chunkSize, end - pos));
        if (chunk.length === 0) return;
        pos += chunk.length;
        yield chunk;
      }
    } finally {
      await file.close();
    }
  }

  async #openBlob(hash: string) {
    await this.#check(parseHash(hash));
    try {
      return await open(this.blobPath(hash), "r");
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === "ENOENT") {
        throw new RpcError(ErrorCode.UNKNOWN_REF, "unknown blob", { hash });
      }
      throw e;
    }
  }
}

/**
 * Whether `target` is a file of `length` bytes. A blob's name fixes its length: a file of
 * another at that name is what a power cut can leave of a blob renamed into place before its
 * data reached the disk (J-4 renames without syncing), and served as the blob it would answer
 * fewer bytes than the journal rows naming it record, for good. Deno's own stat: node's
 * `statSync` builds its `Stats` at ~10 µs more a call, and each exec stores two or three blobs
 * (issue 33).
 */
function holds(target: string, length: number): boolean {
  try {
    return Deno.statSync(target).size === length;
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) return false;
    throw e;
  }
}

/** Reads up to `length` bytes at `offset` from an open file, fewer at its end. */
async function readAt(
  file: {
    read(
      buffer: Uint8Array,
      offset: number,
      length: number,
      position: number,
    ): Promise<{ bytesRead: number }>;
  },
  offset: number,
  length: number,
): Promise<Uint8Array> {
  const buf = new Uint8Array(length);
  let got = 0;
  while (got < length) {
    const { bytesRead } = await file.read(buf, got, length - got, offset + got);
    if (bytesRead === 0) break;
    got += bytesRead;
  }
  return got === length ? buf : buf.slice(0, got);
}
