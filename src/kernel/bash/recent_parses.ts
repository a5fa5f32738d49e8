import { type File, parseBash } from "./ast.ts";

/**
 * Sources longer than this (UTF-16 code units) are parsed every time, never kept: trees of the
 * densest such sources (`x;x;…`) take ~0.7 MB of heap for all kept ones together (issue 11).
 */
const KEPT_SOURCE_LIMIT = 128;
/** How many of the most recently parsed short sources keep their tree. */
const KEPT_SOURCES = 16;

/** Trees of the most recently parsed short sources, least recent first. */
const recent = new Map<string, File>();

/** Freezes `value` and everything it holds, so that a shared tree cannot be changed by one user. */
function deepFreeze(value: unknown): void {
  if (typeof value !== "object" || value === null || Object.isFrozen(value)) return;
  Object.freeze(value);
  for (const member of Object.values(value)) deepFreeze(member);
}

/**
 * {@link parseBash} of `src`, answered from the last few short sources when it is one of them:
 * agents rerun the same commands, and a parse of even `echo hi` costs a few hundred µs in a busy
 * kernel (issue 10). The tree is shared between callers, so it is frozen.
 */
export function parseRecent(src: string): File {
  const kept = recent.get(src);
  if (kept !== undefined) {
    recent.delete(src);
    recent.set(src, kept);
    return kept;
  }
  const file = parseBash(src);
  if (src.length > KEPT_SOURCE_LIMIT) return file;
  deepFreeze(file);
  recent.set(src, file);
  if (recent.size > KEPT_SOURCES) recent.delete(recent.keys().next().value!);
  return file;
}
