import type { ByteWriter } from "../protocol/frame_writer.ts";
import { sleep } from "../protocol/timers.ts";

/**
 * Bytes a pipe write takes whole or not at all, even on a non-blocking pipe (PIPE_BUF: 4096 on
 * Linux, POSIX's minimum 512 elsewhere).
 */
const ATOMIC_WRITE = Deno.build.os === "linux" ? 4096 : 512;
/**
 * The buffer of the Rust stdout behind `Deno.stdout` (a LineWriter of 1024 bytes): bytes without
 * a newline, at least this many, go to the pipe by one system call whose count `writeSync`
 * returns exactly.
 */
const LINE_BUFFER = 1024;
const NEWLINE = 0x0a;
/** Longest pause in ms between tries to write to a full non-blocking stdout. */
const RETRY_MAX_MS = 50;

/**
 * Where the piece of `p` written next from `at` ends. `Deno.stdout.writeSync` goes through Rust's
 * line-buffered stdout: it writes the bytes up to the last newline by one system call, keeps
 * the rest in its buffer and flushes that by a second one. When the pipe is full at the second,
 * it throws WouldBlock though the first went out and the rest is still buffered, and a retry
 * wrote them again: a frame repeated or spliced into another (issue 13). So a piece is either
 * whole lines of at most {@link ATOMIC_WRITE} bytes, which the pipe takes whole or not at all,
 * or the rest of a longer frame up to its newline, which holds none and is written directly
 * (its newline then starts the next piece). Only where PIPE_BUF is below {@link LINE_BUFFER}
 * (not Linux) may that rest be shorter; it then goes with its newline, which a nearly full pipe
 * may take in part.
 */
function pieceEnd(p: Uint8Array, at: number): number {
  const windowEnd = Math.min(at + ATOMIC_WRITE, p.length);
  const lastNewline = p.lastIndexOf(NEWLINE, windowEnd - 1);
  if (lastNewline >= at) return lastNewline + 1;
  const newline = p.indexOf(NEWLINE, windowEnd);
  if (newline === -1) return p.length;
  return newline - at >= LINE_BUFFER ? newline : newline + 1;
}

/**
 * `Deno.stdout` written from the calling thread. The async write hands each frame to a
 * blocking-pool thread, the largest cost of a notification's way through the facade (issue
 * 18). A client that stops reading then blocks the facade, which stops reading the kernel,
 * whose bounded queues drop and count (K-EVT-10). A non-blocking stdout that is full is tried
 * again after a pause (1 ms, doubling up to {@link RETRY_MAX_MS}) until the client reads; Deno's
 * async write fails there too, which ended the facade (issue 13). Each try writes one piece
 * (see {@link pieceEnd}), whose count is exact whether it went out or met a full pipe.
 */
export const stdoutWriter: ByteWriter = {
  async write(p: Uint8Array): Promise<number> {
    let at = 0;
    for (let pause = 1; at < p.length;) {
      const wrote = this.writeNow!(p.subarray(at));
      at += wrote;
      if (at === p.length) break;
      if (wrote > 0) pause = 1;
      await sleep(pause);
      pause = Math.min(2 * pause, RETRY_MAX_MS);
    }
    return at;
  },
  writeNow(p: Uint8Array): number {
    let at = 0;
    try {
      while (at < p.length) {
        const end = pieceEnd(p, at);
        // A frame that is one piece (most notifications) is written without a view of it.
        at += Deno.stdout.writeSync(at === 0 && end === p.length ? p : p.subarray(at, end));
      }
    } catch (e) {
      if (!(e instanceof Deno.errors.WouldBlock)) throw e;
    }
    return at;
  },
};
