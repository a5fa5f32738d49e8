/**
 * Git directories the kernel makes writable for a project that is a linked worktree (M-ONB-3,
 * `policy/worktree_grants.ts`): the worktree's own git directory, the common one's `objects/`,
 * `refs/` and `logs/`, and the common directory itself for the files git keeps at its top
 * (`packed-refs`, `gc.pid`, `shallow`), which it replaces through a lock file made beside them.
 * Nothing there is run or read by a name of P-SBX-6's list, so such a write root holds no
 * placeholder for an absent one (they were made in the human's `.git/objects`); what git reads as
 * configuration there stays protected, and in the common directory everything else that exists.
 */
import { someEntries } from "./scan_listings.ts";
import { readSmallFile } from "../bash/small_file.ts";
import { surelyMissing } from "../bash/surely_missing.ts";

/** The most of a git pointer file read. */
const POINTER_LIMIT = 4096;

/** The git directories of a linked worktree. */
export interface LinkedWorktree {
  /** `<common>/worktrees/<name>`, physical. */
  gitDir: string;
  /** The repository's common git directory, physical. */
  commonDir: string;
}

function realPath(path: string): string | null {
  try {
    return Deno.realPathSync(path);
  } catch {
    return null;
  }
}

/** `text` (a path git wrote in a pointer file) made absolute against `base`, physical. */
function named(text: string | null, base: string): string | null {
  const path = text?.trim();
  if (path === undefined || path === "" || path.includes("\n")) return null;
  return realPath(path.startsWith("/") ? path : `${base}/${path}`);
}

/**
 * The linked worktree whose top is `root`, or null: `root/.git` is a regular file (not a link)
 * naming `<common>/worktrees/<name>`, whose `commondir` names `<common>` and whose `gitdir` names
 * `root/.git` back. The back link is git's own (`git worktree add` writes it) and lies outside the
 * root, so an agent that writes a `.git` file in its root cannot point its grants at another
 * repository.
 */
export function linkedWorktree(root: string): LinkedWorktree | null {
  const top = realPath(root);
  if (top === null) return null;
  const dotGit = `${top}/.git`;
  try {
    if (!Deno.lstatSync(dotGit).isFile) return null;
  } catch {
    return null;
  }
  const pointer = /^gitdir: (.*)$/m.exec(readSmallFile(dotGit, POINTER_LIMIT) ?? "")?.[1];
  const gitDir = named(pointer ?? null, top);
  if (gitDir === null) return null;
  const commonDir = named(readSmallFile(`${gitDir}/commondir`, POINTER_LIMIT), gitDir);
  if (commonDir === null) return null;
  const name = gitDir.slice(gitDir.lastIndexOf("/") + 1);
  if (gitDir !== `${commonDir}/worktrees/${name}`) return null;
  if (named(readSmallFile(`${gitDir}/gitdir`, POINTER_LIMIT), gitDir) !== dotGit) return null;
  // inside the root already granted: nothing to add
  if (commonDir === top || commonDir.startsWith(`${top}/`)) return null;
  return { gitDir, commonDir };
}

/**
 * Whether `path` is a file itself (a final symlink not followed). Asked at every sandboxed exec
 * of most write roots, where these are absent (issue 33): no failed stat's exception then.
 */
export function isFile(path: string): boolean {
  if (surelyMissing(path, false)) return false;
  try {
    return Deno.lstatSync(path).isFile;
  } catch {
    return false;
  }
}

function isDir(path: string): boolean {
  if (surelyMissing(path, false)) return false;
  try {
    return Deno.lstatSync(path).isDirectory;
  } catch {
    return false;
  }
}

/** Whether `dir` is a linked worktree's git directory (`…/worktrees/ID` holding a `commondir`). */
export function isWorktreeGitDir(dir: string): boolean {
  return /\/worktrees\/[^/]+$/.test(dir) && isFile(`${dir}/commondir`);
}

/** Whether `dir` is a git directory: it has a `HEAD`, `objects/` and `refs/` (git's test). */
function isGitDir(dir: string): boolean {
  return isFile(`${dir}/HEAD`) && isDir(`${dir}/objects`) && isDir(`${dir}/refs`);
}

/** Whether `dir` is a git directory with linked worktrees (`worktrees/`): a common directory. */
export function isCommonGitDir(dir: string): boolean {
  return isGitDir(dir) && isDir(`${dir}/worktrees`);
}

/**
 * Whether the write root `root` lies inside a git directory: a linked worktree's own, a common
 * directory, or the `objects`, `refs` or `logs` of a git directory.
 */
export function isGitInternalRoot(root: string): boolean {
  if (isWorktreeGitDir(root) || isCommonGitDir(root)) return true;
  const cut = root.lastIndexOf("/");
  const parent = root.slice(0, cut);
  return ["objects", "refs", "logs"].includes(root.slice(cut + 1)) && parent !== "" &&
    isGitDir(parent);
}

/**
 * What a linked worktree's work writes at the top of the common directory (git's `common_list`
 * and the lock and temporary files it replaces them through): a project that is a linked worktree
 * is granted these names there (`policy/worktree_grants.ts`), and every other entry stays read-only.
 */
export const COMMON_WRITABLE: readonly string[] = [
  "objects",
  "refs",
  "logs",
  "worktrees",
  "packed-refs",
  "packed-refs.lock",
  "packed-refs.new",
  "gc.pid",
  "gc.pid.lock",
  "shallow",
  "shallow.lock",
];

/**
 * Whether the linked worktree whose git directory is `gitDir` has its work tree in one of the
 * writable `roots` (one the agent added in its project: `git worktree add side`), as git's own
 * links on both sides say: the agent's as much as its project.
 */
export function inRoots(gitDir: string, roots: readonly string[]): boolean {
  const named = readSmallFile(`${gitDir}/gitdir`, POINTER_LIMIT)?.trim();
  if (named === undefined || !named.endsWith("/.git")) return false;
  const top = named.slice(0, -"/.git".length);
  return roots.some((root) => top === root || top.startsWith(`${root}/`)) &&
    linkedWorktree(top)?.gitDir === gitDir;
}

/** Directories of a common directory held when absent ({@link commonDirProtected}). */
const HELD_IN_COMMON = ["info", "modules"];

/** Most entries of a common directory looked at: past them it is read-only whole. */
const COMMON_ENTRY_LIMIT = 1000;

/**
 * What stays read-only in the common directory `common`, a write root, whose `worktrees/ID` are
 * writable only when they are write roots themselves (`roots`): every entry that exists but those
 * of {@link COMMON_WRITABLE} (the main worktree's `HEAD`, `index` and state, `config`, `hooks/`,
 * `info/`, `modules/`, …), `info/` and `modules/` when absent too, and the git directory of each
 * other worktree but those whose work tree is in a root. With more entries than can be looked at
 * (an agent's flood), the whole directory.
 */
export function commonDirProtected(
  common: string,
  roots: readonly string[],
): { path: string; dir: boolean; absent: boolean }[] {
  const top = someEntries(common, COMMON_ENTRY_LIMIT);
  const trees = someEntries(`${common}/worktrees`, COMMON_ENTRY_LIMIT);
  if (top === null || !top.complete || (trees !== null && !trees.complete)) {
    return [{ path: common, dir: true, absent: false }];
  }
  // absent, held by empty directories (git reads one as none): a submodule's repository made in
  // `modules/` is the one the human's `git submodule update --init` then uses, config and hooks
  // with it, and `info/` holds the main worktree's attributes, excludes and sparse-checkout
  const held = HELD_IN_COMMON.filter((name) => !top.entries.some((e) => e.name === name))
    .map((name) => ({ path: `${common}/${name}`, dir: true, absent: true }));
  // a symlink is left as the rest of a write root's are: a bind would protect its target
  const kept = top.entries.filter((e) => !e.isSymlink && !COMMON_WRITABLE.includes(e.name))
    .map((e) => ({ path: `${common}/${e.name}`, dir: e.isDirectory, absent: false }));
  const others = (trees?.entries ?? []).filter((e) => !e.isSymlink).map((e) => ({
    path: `${common}/worktrees/${e.name}`,
    dir: e.isDirectory,
    absent: false,
  })).filter((e) => !roots.includes(e.path) && !inRoots(e.path, roots));
  return [...kept, ...held, ...others];
}
