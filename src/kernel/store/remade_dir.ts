import { mkdirSync } from "node:fs";
import { fileIdentity } from "./file_identity.ts";

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
 * The identity ({@link fileIdentity}) of directory `dir`, made first (0700, G-STATE-4) when it is
 * missing: one that differs from an earlier look is a directory made again since.
 */
export function dirIdentity(dir: string): string {
  const seen = fileIdentity(dir);
  if (seen !== null) return seen;
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  return fileIdentity(dir)!;
}
