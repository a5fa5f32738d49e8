/** The directories the shell may be in, as effect analysis follows them (K-EFF-3). */

/** Directories the shell may be in; null when unknown. */
export type Cwds = readonly string[] | null;

/** Possible directories after a command succeeded (`ok`) or failed (`fail`). */
export interface Flow {
  ok: Cwds;
  fail: Cwds;
}

/** Union of two cwd sets; unknown absorbs. */
export function union(a: Cwds, b: Cwds): Cwds {
  if (a === null || b === null) return null;
  if (a === b) return a;
  return unique([...a, ...b]);
}

/** Sorted unique list. */
export function unique(list: readonly string[]): string[] {
  return [...new Set(list)].sort();
}

/** Whether two cwd sets are equal. */
export function sameCwds(a: Cwds, b: Cwds): boolean {
  if (a === null || b === null) return a === b;
  return a.length === b.length && a.every((value, i) => value === b[i]);
}
