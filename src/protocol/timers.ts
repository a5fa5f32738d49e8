/**
 * Timers that leave Deno's Node layer unloaded (issue 33). Deno 2.9's global `setTimeout` and
 * `setInterval` are Node's: the first call loads `node:timers` and with it much of the Node
 * compatibility layer (its errors, util, buffer, inspect ...), resident for good; the facade,
 * which needs none of it, held 1.5-2 MiB less without it and `node:util`. `AbortSignal.timeout`
 * runs on the same timer queue without it. Its timer cannot be cleared: a cancelled one drops its
 * callback and stays queued, keeping the event loop alive, until its time comes (both programs
 * end by `Deno.exit`).
 */

/** Calls `fn` once after `ms` milliseconds, unless the function returned was called first. */
export function after(ms: number, fn: () => void): () => void {
  let pending: (() => void) | null = fn;
  AbortSignal.timeout(Math.max(0, ms)).onabort = () => {
    const call = pending;
    pending = null;
    call?.();
  };
  return () => pending = null;
}

/** Resolves after `ms` milliseconds. */
export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => after(ms, resolve));
}
