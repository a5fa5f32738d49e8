/**
 * A byte stream (BYOB reads) over the non-blocking read end of a pipe: each read tries the fd on
 * the calling thread and, when it is empty, waits for it on a worker thread (`fd_calls.ts`).
 */
import { closeFd, EAGAIN, EINTR, readFd, waitReadable } from "./fd_calls.ts";

/**
 * Longest single wait for the fd on a worker thread: after a cancel the fd is closed at most this
 * late (never while a thread still polls it, since its number could be reused meanwhile).
 */
const WAIT_MS = 100;
/** The chunk a default (non-BYOB) reader is given. */
const AUTO_CHUNK = 64 * 1024;

/**
 * A ReadableStream of type "bytes" that owns `fd` (non-blocking) and closes it at end of file, on
 * an error and on cancel.
 */
export function fdReadable(fd: number): ReadableStream<Uint8Array> {
  let state: "open" | "cancelled" | "closed" = "open";
  let waiting = false;
  const close = () => {
    if (state !== "closed") closeFd(fd);
    state = "closed";
  };
  return new ReadableStream({
    type: "bytes",
    autoAllocateChunkSize: AUTO_CHUNK,
    async pull(controller) {
      const request = controller.byobRequest!;
      const view = request.view!;
      const into = new Uint8Array(view.buffer, view.byteOffset, view.byteLength);
      while (state === "open") {
        const n = readFd(fd, into);
        if (n > 0) return request.respond(n);
        if (n === 0) {
          close();
          controller.close();
          return request.respond(0);
        }
        if (n === -EINTR) continue;
        if (n !== -EAGAIN) {
          close();
          return controller.error(new Error(`read of fd ${fd} failed (errno ${-n})`));
        }
        waiting = true;
        await waitReadable(fd, WAIT_MS);
        waiting = false;
      }
      if (state === "cancelled") close();
    },
    cancel() {
      if (waiting) state = "cancelled"; // the pull closes it once its wait is over
      else close();
    },
  });
}
