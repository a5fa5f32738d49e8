/**
 * A living sandbox's protections, checked again while it lives (P-SBX-6). Linux drops a sandbox's
 * mount whose mount point the host removes or renames (a placeholder deleted by hand or by
 * `git clean -fdx`, a `.git` made anew), and the name is then free inside: a run going on could
 * create it. Polled, not watched with inotify: Deno's watcher opens a FIFO made in a watched
 * directory and blocks on it, and the kernel with it.
 */

/** How often a sandbox with a run going on is checked: the longest a freed name stays free. */
export const GUARD_MS = 100;

/**
 * Every {@link GUARD_MS} while `active()`, calls `breached` once when `intact()` is false; stops
 * when `ended` settles or after the call.
 */
export function guardProtection(
  active: () => boolean,
  intact: () => boolean,
  ended: Promise<unknown>,
  breached: () => void,
): void {
  const timer = setInterval(() => {
    if (!active() || intact()) return;
    clearInterval(timer);
    breached();
  }, GUARD_MS);
  ended.then(() => clearInterval(timer), () => clearInterval(timer));
}
