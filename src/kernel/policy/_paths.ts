/** Glob paths in effect derivation (K-EFF-3). */

/**
 * Whether a path holds a glob segment that may match `.` or `..` (`.?`, `.*`, `@(..)`): with
 * `globskipdots` off (bash < 5.2, or `shopt -u`) such a path can climb out of where it looks.
 */
export function globMayClimb(path: string): boolean {
  return path.split("/").some((segment) =>
    (/^\.[.*?[]/.test(segment) && /[*?[]/.test(segment)) || /[@!+*?]\(/.test(segment)
  );
}
