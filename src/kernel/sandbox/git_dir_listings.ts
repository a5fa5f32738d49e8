/**
 * What the protection scan (P-SBX-6, `protected_paths.ts`) reads of a git directory: its names,
 * its linked worktrees and its submodules' repositories, each read bounded, since an agent may
 * flood a directory there with millions of entries.
 */
import { someEntries } from "./scan_listings.ts";
import { isFile } from "./git_internal.ts";

/** Most entries read of a directory in a git directory (an agent's may hold millions). */
const GIT_ENTRY_LIMIT = 1000;

/** Most directories below a `.git/modules` looked at for submodules' repositories. */
const MODULE_DIR_LIMIT = 200;

/**
 * The repositories of the submodules of the `.git` directory `gitDir`, nested ones included:
 * each directory below `modules/` (a submodule's name may hold `/`) that has a `HEAD`. Git reads
 * their `config` and runs their `hooks` whenever it enters a submodule, as `git status` at the
 * top does for every submodule in the index. Null when there are more directories to look at
 * than {@link MODULE_DIR_LIMIT}, or more entries in one than {@link GIT_ENTRY_LIMIT} (an agent's
 * flood, which would hide the human's submodules past it).
 */
export function submoduleRepositories(gitDir: string): string[] | null {
  const found: string[] = [];
  const pending = [`${gitDir}/modules`];
  for (let seen = 0; pending.length > 0; seen++) {
    if (seen === MODULE_DIR_LIMIT) return null;
    const dir = pending.pop()!;
    const read = someEntries(dir, GIT_ENTRY_LIMIT);
    if (read === null) continue; // absent or unreadable
    const { entries, complete } = read;
    const head = complete
      ? entries.some((e) => e.name === "HEAD" && e.isFile)
      : isFile(`${dir}/HEAD`);
    if (head) {
      found.push(dir);
      pending.push(`${dir}/modules`);
    } else if (!complete) return null;
    else {
      for (const e of entries) if (e.isDirectory) pending.push(`${dir}/${e.name}`);
    }
  }
  return found;
}

/** Most linked worktrees of one repository (`worktrees/ID`) looked at. */
const WORKTREE_LIMIT = 200;

/**
 * The names in directory `dir`, or null when it cannot be read or holds more than
 * {@link GIT_ENTRY_LIMIT} (each name is then looked up).
 */
export function namesIn(dir: string): ReadonlySet<string> | null {
  const read = someEntries(dir, GIT_ENTRY_LIMIT);
  return read?.complete ? new Set(read.entries.map((e) => e.name)) : null;
}

/**
 * The git directories of the linked worktrees of the common directory `common`, or null when
 * `worktrees` holds more than {@link WORKTREE_LIMIT} entries (an agent's flood, which would hide
 * the human's worktrees past it).
 */
export function linkedWorktrees(common: string): string[] | null {
  const read = someEntries(`${common}/worktrees`, WORKTREE_LIMIT);
  if (read !== null && !read.complete) return null;
  return (read?.entries ?? []).filter((e) => e.isDirectory)
    .map((e) => `${common}/worktrees/${e.name}`);
}
