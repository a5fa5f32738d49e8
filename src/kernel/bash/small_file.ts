/**
 * Reading a small text file that someone else may control (a repository's config an agent can
 * write): never blocking and never unbounded, whatever the path turns out to be.
 */
import { closeFd, openReadNonBlocking, readFd } from "./fd_calls.ts";
import { surelyMissing } from "./surely_missing.ts";

/**
 * The text of the regular file at `path` (symlinks followed) when it holds at most `limit` bytes,
 * else null (missing, not a regular file, too large, unreadable). Opened non-blocking, so a FIFO
 * put there (even after the check) reads as empty at once instead of blocking the kernel, and read
 * at most `limit` + 1 bytes, so a device such as /dev/zero cannot fill its memory.
 */
export function readSmallFile(path: string, limit: number): string | null {
  const bytes = readSmallBytes(path, limit);
  return bytes === null ? null : new TextDecoder().decode(bytes);
}

/**
 * The bytes of the regular file at `path`, read as {@link readSmallFile} reads it, or null. A
 * missing one is told without a failed stat's exception: a sandboxed exec looks for git's config
 * files, most of them absent, at each of its runs (issue 33).
 */
export function readSmallBytes(path: string, limit: number): Uint8Array | null {
  if (surelyMissing(path)) return null;
  let size: number;
  try {
    const info = Deno.statSync(path);
    if (!info.isFile || info.size > limit) return null;
    size = info.size;
  } catch {
    return null;
  }
  const fd = openReadNonBlocking(path);
  if (fd < 0) return null;
  try {
    // sized for the file as it was (a config is read at every exec), grown only if it grew
    let buf = new Uint8Array(size + 1);
    let got = 0;
    while (got <= limit) {
      if (got === buf.length) {
        const grown = new Uint8Array(Math.min(limit + 1, 2 * buf.length));
        grown.set(buf);
        buf = grown;
      }
      const n = readFd(fd, buf.subarray(got));
      if (n < 0) return null; // a FIFO with a writer but nothing written, or an error
      if (n === 0) break;
      got += n;
    }
    return got > limit ? null : buf.subarray(0, got);
  } finally {
    closeFd(fd);
  }
}
