/**
 * Directories inside a git directory that the kernel makes writable for a project that is a
 * linked worktree (M-ONB-3, `policy/worktree_grants.ts`): the worktree's own git directory and
 * the common one's `objects/`, `refs/` and `logs/`. Nothing there is run or read by a name of
 * P-SBX-6's list, so such a write root holds no placeholder for an absent one (they were made in
 * the human's `.git/objects`); what git reads as configuration there stays protected.
 */

function isFile(path: string): boolean {
  try {
    return Deno.lstatSync(path).isFile;
  } catch {
    return false;
  }
}

function isDir(path: string): boolean {
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

/**
 * Whether the write root `root` lies inside a git directory: a linked worktree's own, or the
 * `objects`, `refs` or `logs` of one that has a `HEAD`, `objects/` and `refs/` (git's test).
 */
export function isGitInternalRoot(root: string): boolean {
  if (isWorktreeGitDir(root)) return true;
  const cut = root.lastIndexOf("/");
  const parent = root.slice(0, cut);
  return ["objects", "refs", "logs"].includes(root.slice(cut + 1)) && parent !== "" &&
    isFile(`${parent}/HEAD`) && isDir(`${parent}/objects`) && isDir(`${parent}/refs`);
}
