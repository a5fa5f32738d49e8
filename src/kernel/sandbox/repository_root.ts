/** Where the git work tree holding a directory begins. */
import { surelyMissing } from "../bash/surely_missing.ts";

/**
 * The nearest directory at or above `dir` on the host with a `.git` entry (a repository's top), or
 * null. Asked at every sandboxed exec (its git excludes): the levels with no `.git`, most of them,
 * are passed without the exception a failed stat throws (issue 33).
 */
export function repositoryRoot(dir: string): string | null {
  for (let at = dir;; at = at.slice(0, at.lastIndexOf("/")) || "/") {
    const dotGit = `${at === "/" ? "" : at}/.git`;
    if (!surelyMissing(dotGit, false)) {
      try {
        Deno.lstatSync(dotGit);
        return at;
      } catch {
        // none here
      }
    }
    if (at === "/") return null;
  }
}
