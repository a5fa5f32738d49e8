/**
 * A new, empty 0600 file at `path`, open for writing, replacing any file there. The old file is
 * unlinked rather than truncated: ext4 flushes a file truncated to zero to disk on close
 * (auto_da_alloc), which cost milliseconds per exec on a busy disk (issue 10).
 */
export function freshFile(path: string): Deno.FsFile {
  try {
    Deno.removeSync(path);
  } catch (e) {
    if (!(e instanceof Deno.errors.NotFound)) throw e;
  }
  return Deno.openSync(path, { write: true, createNew: true, mode: 0o600 });
}

/** Writes `bytes` into a {@link freshFile} at `path` (a link planted there is not followed). */
export function writeFreshFile(path: string, bytes: Uint8Array): void {
  const file = freshFile(path);
  try {
    writeAll(file, bytes);
  } finally {
    file.close();
  }
}

/** Writes all of `bytes` to `file` at its current position. */
export function writeAll(file: Deno.FsFile, bytes: Uint8Array): void {
  for (let done = 0; done < bytes.length;) done += file.writeSync(bytes.subarray(done));
}
