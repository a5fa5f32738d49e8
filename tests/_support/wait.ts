/** Test support: bounded waiting and polling. */

/**
 * A bound on a wait for an event that a loaded machine can delay by seconds (a kernel stopped for
 * 4.5 s missed a 3 s wait for its close): a passing run does not wait it out, so it can be long.
 */
export const EVENT_WAIT_MS = 20000;

/** Waits `ms` milliseconds. */
export function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Polls `check` every 20 ms until it returns true or `ms` pass; returns the last result. */
export async function waitUntil(
  check: () => boolean | Promise<boolean>,
  ms: number,
): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() >= deadline) return false;
    await delay(20);
  }
  return true;
}

/** Calls `fetch` at {@link waitUntil}'s pace until `done` holds for its result (at most `ms`); returns it. */
export async function pollUntil<T>(
  fetch: () => Promise<T>,
  done: (value: T) => boolean,
  ms = 10000,
): Promise<T> {
  let value = await fetch();
  const reached = await waitUntil(async () => done(value) || done(value = await fetch()), ms);
  if (!reached) {
    throw new Error(`condition not reached within ${ms} ms; last: ${JSON.stringify(value)}`);
  }
  return value;
}
