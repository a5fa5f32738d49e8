/**
 * A project that is a linked git worktree (M-ONB-3): `git status`, `git diff`, `git add` and
 * `git commit` in it read the repository's common git directory and write the worktree's own git
 * directory and the common one's object store and refs, all outside the `DIR/**` grants
 * (M-ONB-2). The kernel adds exactly those grants when it resolves a principal's policy entry,
 * never in the user's file: the common directory readable, and writable only in `objects/`,
 * `refs/` and `logs/` and at `packed-refs`, `gc.pid` and `shallow` (and their lock files: deleting
 * any branch or tag locks `packed-refs`); the worktree's git directory writable. The common
 * directory's `config`, `hooks/`, `info/`, the main worktree's `HEAD` and `index`, every other
 * entry there, every other worktree's git directory, and (P-SBX-6, through the sandbox's
 * protection of the write root's `.git` file) this one's `commondir` and `config.worktree` stay
 * read-only: nothing the agent writes there runs as the human.
 */
import type { PrincipalPolicy } from "./leash.ts";
import { grantRoot } from "../sandbox/view.ts";
import { inRoots, type LinkedWorktree, linkedWorktree } from "../sandbox/git_internal.ts";
import { someEntries } from "../sandbox/scan_listings.ts";
import { surelyMissing } from "../bash/surely_missing.ts";

/** Most linked worktrees of a repository looked at for those inside a project. */
const NESTED_LIMIT = 200;

/** The roots of `entry`'s `fs.write` grants. */
function writeRoots(entry: PrincipalPolicy, home: string | undefined): string[] {
  return [...new Set(entry.fs_write.map((glob) => grantRoot(glob, home)))]
    .filter((root): root is string => root !== null);
}

/**
 * The linked worktrees at `roots`, and those of the same repositories whose work trees lie inside
 * such a root (the agent's `git worktree add side`).
 */
function linkedRoots(roots: readonly string[]): LinkedWorktree[] {
  const found: LinkedWorktree[] = [];
  for (const root of roots) {
    const tree = linkedWorktree(root);
    if (tree === null) continue;
    found.push(tree);
    const { commonDir } = tree;
    const others = someEntries(`${commonDir}/worktrees`, NESTED_LIMIT)?.entries ?? [];
    for (const { name } of others) {
      const gitDir = `${commonDir}/worktrees/${name}`;
      if (gitDir !== tree.gitDir && inRoots(gitDir, roots)) found.push({ gitDir, commonDir });
    }
  }
  return found;
}

/**
 * What {@link withWorktreeGrants} finds for `entry` now, as text: a project made a linked
 * worktree (or one removed) after its agent attached changes it, so its grants are resolved
 * again at the next request, as for an edit of the policy.
 */
export function worktreeKey(entry: PrincipalPolicy | null, home: string | undefined): string {
  if (entry === null) return "";
  const roots = writeRoots(entry, home);
  const id = roots.join("\0");
  const last = seen.get(id);
  if (last !== undefined && stampOf(roots, last.dirs) === last.stamp) return last.key;
  // stamped between two looks: a change before the stamp is in the second, one after it changes
  // the next request's stamp; the second look is kept only when it reads the directories stamped
  const dirs = linkedDirs(linkedRoots(roots));
  const stamp = stampOf(roots, dirs);
  const found = linkedRoots(roots);
  const key = JSON.stringify(found);
  if (linkedDirs(found).join("\0") === dirs.join("\0")) {
    if (seen.size >= SEEN_LIMIT) seen.clear();
    seen.set(id, { stamp, key, dirs });
  }
  return key;
}

/** The directories whose changes {@link stampOf} watches for `found`. */
function linkedDirs(found: readonly LinkedWorktree[]): string[] {
  return [...new Set(found.flatMap(({ gitDir, commonDir }) => [gitDir, `${commonDir}/worktrees`]))];
}

/**
 * What {@link worktreeKey} last found for a list of roots (joined by NUL), with the directories it
 * read and their {@link stampOf}: a request looks again only when one of them changed (reading
 * every worktree's links took 90 µs a request beside ten worktrees).
 */
const seen = new Map<string, { stamp: string; key: string; dirs: string[] }>();
/** Most lists of roots remembered; past it they are forgotten at once. */
const SEEN_LIMIT = 64;

/**
 * The inode and change times of each root's `.git` and of `dirs` (git directories, whose links
 * git replaces by rename, and `worktrees/` directories, whose entries `git worktree add` and
 * `remove` change), not followed; "-" for one that is not there.
 */
function stampOf(roots: readonly string[], dirs: readonly string[]): string {
  return [...roots.map((root) => `${root}/.git`), ...dirs].map((path) => {
    if (surelyMissing(path)) return "-";
    try {
      const { ino, nlink, size, ctime, mtime } = Deno.lstatSync(path);
      return `${ino}:${nlink}:${size}:${ctime?.getTime()}:${mtime?.getTime()}`;
    } catch {
      return "-";
    }
  }).join(" ");
}

/**
 * `entry` with the grants a linked worktree at the root of one of its `fs.write` grants needs:
 * the common and own git directories readable, the own one and the common one's `objects/`,
 * `refs/`, `logs/`, `packed-refs`, `gc.pid` and `shallow` writable. The entry itself when there
 * is none.
 */
export function withWorktreeGrants(
  entry: PrincipalPolicy | null,
  home: string | undefined,
): PrincipalPolicy | null {
  if (entry === null) return null;
  const read: string[] = [];
  const write: string[] = [];
  for (const { gitDir, commonDir } of linkedRoots(writeRoots(entry, home))) {
    read.push(`${commonDir}/**`);
    write.push(
      `${gitDir}/**`,
      ...["objects", "refs", "logs"].map((d) => `${commonDir}/${d}/**`),
      // replaced through a lock file beside them, so the sandbox binds the directory writable
      // and holds the rest of it read-only (`sandbox/git_internal.ts`)
      ...["packed-refs*", "gc.pid*", "shallow*"].map((name) => `${commonDir}/${name}`),
    );
  }
  if (write.length === 0) return entry;
  const add = (have: readonly string[], more: string[]) => [
    ...have,
    ...more.filter((glob) => !have.includes(glob)),
  ];
  return {
    ...entry,
    fs_read: add(entry.fs_read, read),
    fs_write: add(entry.fs_write, write),
  };
}
