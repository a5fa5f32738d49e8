/**
 * What the last protection of each write root held there (P-SBX-6), by root and lifted names: the
 * static layer asks approval before a write falls on one ("the static layer agrees"), also where
 * the scan protects more than the names (a hooks directory, a file a repository's config
 * includes, the target of a link from HOME, a file a `.envrc` loads).
 */

/** A held path: a file, or a directory with everything below it. */
interface Held {
  path: string;
  dir: boolean;
}

const heldBefore = new Map<string, readonly Held[]>();

/** The key of a root and the names lifted for it. */
function key(root: string, lifted: readonly string[]): string {
  return `${root}\0${[...lifted].sort().join("\0")}`;
}

/** Records what a protection of `roots` (real paths), less `lifted`, holds below each. */
export function recordHeld(
  roots: readonly string[],
  lifted: readonly string[],
  paths: Iterable<Held>,
): void {
  if (heldBefore.size > 1024) heldBefore.clear();
  const all = [...paths];
  for (const root of roots) {
    heldBefore.set(key(root, lifted), all.filter((p) => p.path.startsWith(`${root}/`)));
  }
}

/**
 * Whether `path` is at or below what the last protection of the write root `root` (a real path)
 * held, less the `lifted` names.
 */
export function heldByLastScan(root: string, lifted: readonly string[], path: string): boolean {
  const held = heldBefore.get(key(root, lifted)) ?? [];
  return held.some((p) => path === p.path || (p.dir && path.startsWith(`${p.path}/`)));
}
