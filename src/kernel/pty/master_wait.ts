/**
 * Waits for a PTY master to become readable without holding a thread per PTY. Deno runs blocking
 * calls on a few dozen threads, so a poll(2) of its own for every idle PTY would hold them up for
 * every file operation of the kernel. Where `bash/fd_waiter.ts` runs (Linux) the master waits in
 * its one shared poll with no bound, and whoever has news for the reader (the child's reap, a
 * close, a timeout) ends the wait; elsewhere it waits in a poll of its own on a worker thread,
 * bounded so the reader notices that news in time.
 */
import { dropFd, endWait, fdWaiterAvailable, waitFd } from "../bash/fd_waiter.ts";
import { closeFd, waitReadable } from "./libc.ts";

/** Longest unbounded wait in ms on a poll of its own, where nobody can end it early (also bounds `close`). */
const OWN_POLL_WAIT_MS = 100;

/** The waits of one reader (at most one pending at a time) on a PTY master it owns. */
export class MasterWait {
  readonly #fd: number;
  /** Whether the master waits in fd_waiter's shared poll (decided once, here). */
  readonly #shared = fdWaiterAvailable();

  constructor(fd: number) {
    this.#fd = fd;
  }

  /**
   * Resolves once the master is readable or hung up, `timeoutMs` passed (null: no bound), or
   * {@link wake} is called; without the shared poll, null means {@link OWN_POLL_WAIT_MS}.
   */
  async until(timeoutMs: number | null): Promise<void> {
    if (!this.#shared) {
      await waitReadable(this.#fd, timeoutMs ?? OWN_POLL_WAIT_MS);
      return;
    }
    const timer = timeoutMs === null ? undefined : setTimeout(() => endWait(this.#fd), timeoutMs);
    await waitFd(this.#fd);
    clearTimeout(timer);
  }

  /** Ends a pending wait now, so the reader looks at the PTY again. */
  wake(): void {
    if (this.#shared) endWait(this.#fd);
  }

  /** Closes the master, once no poll holds it (its number could be reused meanwhile). */
  close(): void {
    if (this.#shared) dropFd(this.#fd);
    else closeFd(this.#fd);
  }
}
