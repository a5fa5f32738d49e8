/**
 * Work a process does once it falls idle after a burst of requests (issue 33): the kernel counts
 * its requests here and the facade the frames it reads and the events it forwards, and their
 * idle work (giving memory back: see `heap_compaction.ts`, and the kernel's
 * `daemon/idle_trim.ts`; the kernel's journal checkpoint) runs on the first tick of {@link IDLE_TICK_MS} that saw no request
 * since the tick before, once per burst. The ticks run
 * only from a burst's first request until its idle work: an idle process has no timer queued.
 */
import { after } from "./timers.ts";

/** The period of the idle check, in ms: idle work follows a burst's last request by 2-4 s. */
export const IDLE_TICK_MS = 2000;

let requests = 0;

/** A started idle check: whether its ticks run (a burst began, its idle work has not run yet). */
interface IdleCheck {
  ticking: boolean;
  tick(): void;
}

const idleChecks = new Set<IdleCheck>();

/** Counts one request or frame read: the process is not idle. */
export function noteActivity(): void {
  requests++;
  for (const check of idleChecks) {
    if (!check.ticking) check.tick();
  }
}

/**
 * Starts the idle check: `work` runs on the first tick of every `periodMs` that saw no request
 * since the tick before, once per burst of requests (none before the first request). A burst's
 * ticks keep the event loop alive up to two periods after its last request; returns the function
 * that stops the check.
 */
export function startIdleWork(work: () => void, periodMs = IDLE_TICK_MS): () => void {
  let cancel = () => {};
  const check: IdleCheck = {
    ticking: false,
    tick() {
      check.ticking = true;
      const seen = requests;
      cancel = after(periodMs, () => {
        if (requests !== seen) return check.tick();
        check.ticking = false;
        work();
      });
    },
  };
  idleChecks.add(check);
  return () => {
    cancel();
    idleChecks.delete(check);
  };
}
