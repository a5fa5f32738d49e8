import type { ByteWriter } from "../protocol/frame_writer.ts";

/**
 * `Deno.stdout` written from the calling thread. The async write hands each frame to a
 * blocking-pool thread, the largest cost of a notification's way through the facade (issue
 * 18). A client that stops reading then blocks the facade, which stops reading the kernel,
 * whose bounded queues drop and count (K-EVT-10). A non-blocking stdout uses the async write.
 */
export const stdoutWriter: ByteWriter = {
  write(p: Uint8Array): Promise<number> {
    try {
      return Promise.resolve(Deno.stdout.writeSync(p));
    } catch (e) {
      if (e instanceof Deno.errors.WouldBlock) return Deno.stdout.write(p);
      return Promise.reject(e);
    }
  },
};
