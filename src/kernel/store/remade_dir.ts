import { mkdirSync } from "node:fs";

/**
 * Runs `make`, which creates an entry in `dir`; when `dir` is gone (ENOENT), makes it again
 * (0700, G-STATE-4) and runs `make` once more. The state directory's `tmp/` looks disposable,
 * and a user who removed it under a running kernel made every later exec fail until restart.
 */
export function remakingParent<T>(dir: string, make: () => T): T {
  try {
    return make();
  } catch (e) {
    if (!isNotFound(e)) throw e;
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    return make();
  }
}

function isNotFound(e: unknown): boolean {
  return e instanceof Deno.errors.NotFound || (e as NodeJS.ErrnoException)?.code === "ENOENT";
}

/**
 * The identity (device and inode) of directory `dir`, made first (0700, G-STATE-4) when it is
 * missing: one that differs from an earlier look is a directory made again since. Deno's own
 * stat: node's `statSync` builds its `Stats` at ~10 µs more a call, and every exec looks (issue 33).
 */
export function dirIdentity(dir: string): string {
  let stat: Deno.FileInfo;
  try {
    stat = Deno.statSync(dir);
  } catch (e) {
    if (!(e instanceof Deno.errors.NotFound)) throw e;
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    stat = Deno.statSync(dir);
  }
  return `${stat.dev}:${stat.ino}`;
}
