/**
 * A byte stream (BYOB reads) over the non-blocking read end of a pipe (Linux): each read tries
 * the fd on the calling thread and, when it is empty, waits for it with every other waiting fd
 * on one worker thread (`fd_waiter.ts`).
 */
import { EAGAIN, EINTR, readFd } from "./fd_calls.ts";
import { dropFd, waitFd } from "./fd_waiter.ts";

/** The chunk a default (non-BYOB) reader is given. */
const AUTO_CHUNK = 64 * 1024;

/**
 * A ReadableStream of type "bytes" that owns `fd` (non-blocking) and closes it at end of file, on
 * an error and on cancel, then calls `closed`.
 */
export function fdReadable(fd: number, closed?: () => void): ReadableStream<Uint8Array> {
  let open = true;
  const close = () => {
    if (!open) return;
    open = false;
    dropFd(fd);
    closed?.();
  };
  return new ReadableStream({
    type: "bytes",
    autoAllocateChunkSize: AUTO_CHUNK,
    async pull(controller) {
      const request = controller.byobRequest!;
      const view = request.view!;
      const into = new Uint8Array(view.buffer, view.byteOffset, view.byteLength);
      while (open) {
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
        await waitFd(fd);
      }
    },
    cancel: close,
  });
}
