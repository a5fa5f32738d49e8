/** Where the git work tree holding a directory begins. */

/** The nearest directory at or above `dir` on the host with a `.git` entry (a repository's top), or null. */
export function repositoryRoot(dir: string): string | null {
  for (let at = dir;; at = at.slice(0, at.lastIndexOf("/")) || "/") {
    try {
      Deno.lstatSync(`${at === "/" ? "" : at}/.git`);
      return at;
    } catch {
      // none here
    }
    if (at === "/") return null;
  }
}
