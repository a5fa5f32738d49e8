/**
 * Waits for many file descriptors at once on one worker thread (Linux): the output pipes and
 * pidfds of the bash processes `posix_spawn.ts` starts, the launcher's FIFOs and PTY masters
 * (`pty/master_wait.ts`). Deno runs only a few dozen blocking calls at once, so one poll(2) per
 * waiting fd, or a blocking waitpid per child, would stall every other blocking operation of the
 * kernel (file reads, …) once a few dozen tasks run or PTYs sit idle.
 *
 * One poll covers an eventfd and every fd with a pending {@link waitFd}; a new wait or a
 * {@link dropFd} while it runs writes the eventfd so the poll starts again with the new set. A
 * dropped fd is closed only once no poll holds it, since its number could be reused meanwhile.
 */
import { setImmediate } from "node:timers";
import { C_FACTS } from "./c_library.ts";
import { closeFd, EINTR, pollFds, POLLIN, readFd, writeFd } from "./fd_calls.ts";

const EFD_NONBLOCK = 0o4000;
const EFD_CLOEXEC = 0o2000000;
const POLLFD_SIZE = 8;

const symbols = {
  eventfd: { parameters: ["u32", "i32"], result: "i32" },
} as const satisfies Deno.ForeignLibraryInterface;

let wakeFd: number | null = null;
/** The resolver of each fd's pending wait. */
const waiters = new Map<number, () => void>();
/** Whether {@link pollLoop} runs (polling, or about to poll again). */
let looping = false;
/** The fds of the poll running now, or null when none runs. */
let polled: ReadonlySet<number> | null = null;
/** Dropped fds the running poll still holds: closed once it returns. */
const toClose: number[] = [];
const one = new Uint8Array(new BigUint64Array([1n]).buffer);

/** The eventfd that interrupts the poll, made on first use (null: this host has none). */
function wake(): number | null {
  if (wakeFd === null && Deno.build.os === "linux") {
    try {
      const fd = Deno.dlopen(C_FACTS.linux.libc, symbols).symbols.eventfd(
        0,
        EFD_NONBLOCK | EFD_CLOEXEC,
      );
      if (fd >= 0) wakeFd = fd;
    } catch {
      // no eventfd in this C library
    }
  }
  return wakeFd;
}

/** Whether this host can wait for fds here (Linux, with eventfd). */
export function fdWaiterAvailable(): boolean {
  return wake() !== null;
}

/**
 * Polls until no fd is waited for, resolving each wait as its fd becomes ready. Before each poll
 * it lets the event loop turn, so the waits that the woken readers (and new spawns) start in
 * that turn join one poll instead of restarting it one by one: every restart is a round trip to
 * a worker thread, taking CPU time from the bash that is starting.
 */
async function pollLoop(): Promise<void> {
  const wakeup = wake()!;
  looping = true;
  try {
    while (true) {
      await new Promise((resolve) => setImmediate(resolve));
      if (waiters.size === 0) return;
      const fds = [wakeup, ...waiters.keys()];
      const pfds = new Uint8Array(fds.length * POLLFD_SIZE);
      const view = new DataView(pfds.buffer);
      fds.forEach((fd, i) => {
        view.setInt32(i * POLLFD_SIZE, fd, true);
        view.setInt16(i * POLLFD_SIZE + 4, POLLIN, true);
      });
      polled = new Set(fds);
      const n = await pollFds(pfds, fds.length, -1);
      polled = null;
      for (const fd of toClose.splice(0)) closeFd(fd);
      if (n < 0) continue; // EINTR on the worker thread (its errno is out of reach)
      // Drained only when written: a wait that ends by its fd alone costs no more system calls.
      if (view.getInt16(6, true) !== 0) readFd(wakeup, new Uint8Array(8));
      fds.forEach((fd, i) => {
        if (i === 0 || view.getInt16(i * POLLFD_SIZE + 6, true) === 0) return;
        const resolve = waiters.get(fd);
        waiters.delete(fd);
        resolve?.();
      });
    }
  } finally {
    looping = false;
  }
}

/** Interrupts the running poll, if any, so it starts again with the current set. */
function interrupt(): void {
  if (polled === null) return;
  while (writeFd(wake()!, one) === -EINTR);
}

/**
 * Resolves once `fd` is readable, hung up or in error (or dropped). At most one wait per fd at a
 * time; the caller then reads it (non-blocking) itself.
 */
export function waitFd(fd: number): Promise<void> {
  return new Promise((resolve) => {
    waiters.set(fd, resolve);
    if (!looping) pollLoop();
    else interrupt(); // a poll running now starts again with `fd`
  });
}

/** Resolves the pending wait on `fd` and forgets it; whether there was one. */
function settle(fd: number): boolean {
  const resolve = waiters.get(fd);
  if (resolve === undefined) return false;
  waiters.delete(fd);
  resolve();
  return true;
}

/**
 * Ends the pending wait on `fd`, if any, as if it were ready, leaving `fd` open: for a waiter
 * with something else to notice (a timeout, a child's exit). A running poll starts again without it.
 */
export function endWait(fd: number): void {
  if (settle(fd) && polled?.has(fd)) interrupt();
}

/** Ends the wait on `fd` (resolving it) and closes `fd`, once no poll holds it. */
export function dropFd(fd: number): void {
  settle(fd);
  if (polled?.has(fd)) {
    toClose.push(fd);
    interrupt();
  } else closeFd(fd);
}
