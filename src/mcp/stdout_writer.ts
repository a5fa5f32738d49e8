import type { ByteWriter } from "../protocol/frame_writer.ts";

/**
 * Bytes a pipe write takes whole or not at all, even on a non-blocking pipe (PIPE_BUF: 4096 on
 * Linux, POSIX's minimum 512 elsewhere). `Deno.stdout.writeSync` writes all it is given: when a
 * non-blocking stdout fills part way through, it throws WouldBlock without saying how much it
 * wrote, so a retry would write that part twice. Pieces of this size never half-succeed.
 */
const ATOMIC_WRITE = Deno.build.os === "linux" ? 4096 : 512;
/** Longest pause in ms between tries to write to a full non-blocking stdout. */
const RETRY_MAX_MS = 50;

/**
 * `Deno.stdout` written from the calling thread. The async write hands each frame to a
 * blocking-pool thread, the largest cost of a notification's way through the facade (issue
 * 18). A client that stops reading then blocks the facade, which stops reading the kernel,
 * whose bounded queues drop and count (K-EVT-10). A non-blocking stdout that is full is tried
 * again after a pause (1 ms, doubling up to {@link RETRY_MAX_MS}) until the client reads; Deno's
 * async write fails there too, which ended the facade (issue 13).
 */
export const stdoutWriter: ByteWriter = {
  async write(p: Uint8Array): Promise<number> {
    let at = 0;
    for (let pause = 1; at < p.length;) {
      const wrote = this.writeNow!(p.subarray(at));
      at += wrote;
      if (at === p.length) break;
      if (wrote > 0) pause = 1;
      await new Promise((resolve) => setTimeout(resolve, pause));
      pause = Math.min(2 * pause, RETRY_MAX_MS);
    }
    return at;
  },
  writeNow(p: Uint8Array): number {
    let at = 0;
    try {
      while (at < p.length) at += Deno.stdout.writeSync(p.subarray(at, at + ATOMIC_WRITE));
    } catch (e) {
      if (!(e instanceof Deno.errors.WouldBlock)) throw e;
    }
    return at;
  },
};
