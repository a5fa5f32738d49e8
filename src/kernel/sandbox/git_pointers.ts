/**
 * Finding git directories as git finds them (P-SBX-6): through a `.git` file, a `commondir`, a
 * symlink on the way, and from a write root up to the repositories whose work trees hold it.
 */
import { readSmallFile } from "../bash/small_file.ts";
import { normalizePath } from "../bash/lexical_path.ts";
import { surelyMissing } from "../bash/surely_missing.ts";

/** Largest `.git` file or `commondir` read for the directory it names. */
export const LINK_READ_LIMIT = 4096;

/**
 * `path` with its parent directory resolved through symlinks (its last name kept), or null when
 * that directory does not exist.
 */
export function physicalParent(path: string): string | null {
  const slash = path.lastIndexOf("/");
  try {
    return normalizePath(
      `${Deno.realPathSync(path.slice(0, slash) || "/")}/${path.slice(slash + 1)}`,
    );
  } catch {
    return null;
  }
}

/**
 * The directory a reference git follows names, as git resolves it: `named` (the text of a
 * `commondir`, or of a `.git` file after `gitdir: `, trailing line ends dropped) relative to
 * `base`, its symlinks resolved (its directory's, when it is missing); null when `named` is empty.
 */
export function namedDir(named: string, base: string): string | null {
  const path = named.replace(/[\r\n]+$/, "");
  if (path === "") return null;
  const lexical = normalizePath(path.startsWith("/") ? path : `${base}/${path}`);
  try {
    return Deno.realPathSync(lexical);
  } catch {
    // missing: its directory resolved, so no placeholder is made through a symlink on the way
    return physicalParent(lexical) ?? lexical;
  }
}

/** The git directory the `.git` file `gitFile` in `dir` names (`gitdir: PATH`), or null. */
export function gitFileTarget(gitFile: string, dir: string): string | null {
  const text = readSmallFile(gitFile, LINK_READ_LIMIT);
  return text?.startsWith("gitdir: ") ? namedDir(text.slice("gitdir: ".length), dir) : null;
}

/** A repository whose work tree holds a write root: its top and its git directory. */
export interface EnclosingRepository {
  top: string;
  gitDir: string;
}

/**
 * The repositories whose work trees hold `root` (a real path) from above, nearest first: each
 * directory above it with a `.git` that is, through any symlink, a git directory (it has a
 * `HEAD`) or a `.git` file naming one. A project that is one package of a monorepo lies in the
 * monorepo's work tree, and the human's git there runs the hooks its `core.hooksPath` names and
 * reads the files its config includes, which may lie in the root (husky's `frontend/.husky/_`).
 * Every one counts, not only the nearest git would use in the root: the human runs git at each.
 */
export function enclosingRepositories(root: string): EnclosingRepository[] {
  const found: EnclosingRepository[] = [];
  for (let top = root; top !== "/";) {
    top = top.slice(0, top.lastIndexOf("/")) || "/";
    const dotGit = `${top === "/" ? "" : top}/.git`;
    // most directories above a root have none: no stat's thrown error for each (issue 33)
    if (surelyMissing(dotGit)) continue;
    let info: Deno.FileInfo;
    try {
      info = Deno.statSync(dotGit);
    } catch {
      continue; // none, or one that leads nowhere
    }
    let gitDir: string | null = null;
    if (info.isFile) gitDir = gitFileTarget(dotGit, top);
    else if (info.isDirectory) {
      try {
        gitDir = Deno.realPathSync(dotGit);
        Deno.lstatSync(`${gitDir}/HEAD`);
      } catch {
        gitDir = null; // git passes over a .git directory without HEAD
      }
    }
    if (gitDir !== null) found.push({ top, gitDir });
  }
  return found;
}
