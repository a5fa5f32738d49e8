import { freshFile, writeAll } from "./fresh_file.ts";

/**
 * An input file of a scratch directory (`src`, `restore`), open for the kernel to fill once
 * before bash reads it. The file a directory already holds is written over from its start and
 * cut to the new length, rather than unlinked and made again per run: on this ext4 without a
 * journal every new inode scanned the block group's recently deleted ones, and making two per
 * exec was ~14 % of the kernel's CPU per back-to-back exec in a perf profile (issue 33). It is
 * cut after it is written, never to zero before: ext4 flushes a file truncated to zero and then
 * written when it is closed (auto_da_alloc, issue 10). Anything but a plain file of one name (a
 * symlink or a hard link planted by an unconfined run, a directory) is replaced by a
 * {@link freshFile}, so no other file is ever written.
 */
export class ScratchInput {
  private constructor(private readonly file: Deno.FsFile) {}

  /** The input at `path`, made 0600 when there is none. */
  static open(path: string): ScratchInput {
    let info: Deno.FileInfo | null = null;
    try {
      info = Deno.lstatSync(path);
    } catch (e) {
      if (!(e instanceof Deno.errors.NotFound)) throw e;
    }
    const reusable = info !== null && info.isFile && info.nlink === 1;
    return new ScratchInput(reusable ? Deno.openSync(path, { write: true }) : freshFile(path));
  }

  /** Makes `bytes` the whole content of the file: whatever it held before is gone. */
  fill(bytes: Uint8Array): void {
    writeAll(this.file, bytes);
    this.file.truncateSync(bytes.length);
  }

  close(): void {
    this.file.close();
  }
}

/** Makes `bytes` the whole content of the scratch input at `path` ({@link ScratchInput}). */
export function fillScratchInput(path: string, bytes: Uint8Array): void {
  const input = ScratchInput.open(path);
  try {
    input.fill(bytes);
  } finally {
    input.close();
  }
}
