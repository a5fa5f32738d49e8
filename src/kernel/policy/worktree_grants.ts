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
import { readSmallFile } from "../bash/small_file.ts";

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

/** The linked worktrees at the roots of `entry`'s `fs.write` grants. */
function linkedRoots(entry: PrincipalPolicy, home: string | undefined): LinkedWorktree[] {
  const roots = new Set(entry.fs_write.map((glob) => grantRoot(glob, home)));
  return [...roots].flatMap((root) => {
    const tree = root === null ? null : linkedWorktree(root);
    return tree === null ? [] : [tree];
  });
}

/**
 * What {@link withWorktreeGrants} finds for `entry` now, as text: a project made a linked
 * worktree (or one removed) after its agent attached changes it, so its grants are resolved
 * again at the next request, as for an edit of the policy.
 */
export function worktreeKey(entry: PrincipalPolicy | null, home: string | undefined): string {
  return entry === null ? "" : JSON.stringify(linkedRoots(entry, home));
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
  for (const { gitDir, commonDir } of linkedRoots(entry, home)) {
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
