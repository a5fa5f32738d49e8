/** Lexical path handling, as bash sees a path: no filesystem access, symlinks kept (K-EFF-3). */

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
