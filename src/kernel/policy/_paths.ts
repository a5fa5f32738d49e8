/** Lexical path handling for effect derivation: no filesystem access, symlinks kept (K-EFF-3). */

/** Removes `.`, `..` and repeated or trailing slashes from an absolute path. */
export function normalizePath(path: string): string {
  const out: string[] = [];
  for (const segment of path.split("/")) {
    if (segment === "" || segment === ".") continue;
    if (segment === "..") out.pop();
    else out.push(segment);
  }
  return `/${out.join("/")}`;
}

/** Resolves `path` against the absolute directory `cwd`, lexically. */
export function resolvePath(cwd: string, path: string): string {
  return normalizePath(path.startsWith("/") ? path : `${cwd}/${path}`);
}

/** The last segment of a path (`a/b/` → `b`). */
export function baseName(path: string): string {
  const trimmed = path.replace(/\/+$/, "");
  return trimmed.slice(trimmed.lastIndexOf("/") + 1);
}

/**
 * Whether a path holds a glob segment that may match `.` or `..` (`.?`, `.*`, `@(..)`): with
 * `globskipdots` off (bash < 5.2, or `shopt -u`) such a path can climb out of where it looks.
 */
export function globMayClimb(path: string): boolean {
  return path.split("/").some((segment) =>
    (/^\.[.*?[]/.test(segment) && /[*?[]/.test(segment)) || /[@!+*?]\(/.test(segment)
  );
}
