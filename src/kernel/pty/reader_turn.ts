/**
 * How a PTY's reader gives other kernel work its turn between steps of a flood (E-4, K-PTY-8).
 * setImmediate is cheap (a 0 ms timer waits a millisecond or more), but a loop that always has an
 * immediate ready never lets the runtime park, and the runtime then polls sockets only once in
 * dozens of its turns (tokio's event interval): during `cat /dev/urandom` on a PTY, a request
 * another connection sent while the kernel waited on its socket (a `pty.list`) took 100-190 ms.
 * A timer every {@link TIMER_EVERY_MS} lets the runtime park and poll them, at about 1 ms each.
 */
import { setImmediate } from "node:timers";

/** Longest time in ms a flood's reader goes on turns that poll no sockets. */
export const TIMER_EVERY_MS = 10;

/** The turns of one reader: {@link ReaderTurns.next} resolves when its next step may run. */
export class ReaderTurns {
  #timerAt = performance.now();

  /** Waits for the next turn of the event loop, through a timer once {@link TIMER_EVERY_MS} passed. */
  next(): Promise<void> {
    const now = performance.now();
    if (now - this.#timerAt < TIMER_EVERY_MS) return new Promise((r) => setImmediate(r));
    return new Promise((r) => setTimeout(r, 0)).then(() => {
      this.#timerAt = performance.now();
    });
  }
}
