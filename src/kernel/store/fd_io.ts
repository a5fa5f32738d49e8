import { readSync, writeSync } from "node:fs";

/** Reads up to `length` bytes at `offset` of an open file, fewer at its end. */
export function readAtSync(fd: number, offset: number, length: number): Uint8Array {
  const buf = new Uint8Array(length);
  let got = 0;
  while (got < length) {
    const n = readSync(fd, buf, got, length - got, offset + got);
    if (n === 0) break;
    got += n;
  }
  return got === length ? buf : buf.slice(0, got);
}

/** Writes all of `bytes` at `position` of an open file. */
export function writeFully(fd: number, bytes: Uint8Array, position = 0): void {
  for (let done = 0; done < bytes.length;) {
    done += writeSync(fd, bytes, done, bytes.length - done, position + done);
  }
}
