/**
 * Work a process does once it falls idle after a burst of requests (issue 33): the kernel counts
 * its requests here and the facade the frames it reads, and their idle work (giving memory back: see
 * `heap_compaction.ts`, and the kernel's `daemon/idle_trim.ts`) runs on the first tick of
 * {@link IDLE_TICK_MS} that saw no request since the tick before, once per burst.
 */

/** The period of the idle check, in ms: idle work follows a burst's last request by 2-4 s. */
export const IDLE_TICK_MS = 2000;

let requests = 0;

/** Counts one request or frame read: the process is not idle. */
export function noteActivity(): void {
  requests++;
}

/**
 * Starts the idle check: `work` runs on the first tick of every `periodMs` that saw no request
 * since the tick before, once per burst of requests (none before the first request). Never keeps
 * the process alive; returns the function that stops it.
 */
export function startIdleWork(work: () => void, periodMs = IDLE_TICK_MS): () => void {
  let seen = requests;
  let done = true;
  const timer = setInterval(() => {
    if (requests !== seen) {
      seen = requests;
      done = false;
    } else if (!done) {
      work();
      done = true;
    }
  }, periodMs);
  Deno.unrefTimer(timer);
  return () => clearInterval(timer);
}
