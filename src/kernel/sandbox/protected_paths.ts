/**
 * The protected paths of the writable roots of a view (P-SBX-6): what is bound read-only over
 * itself, and which directories are pinned so that renaming or removing a parent cannot take a
 * protection away (a mount point cannot be renamed or removed inside its namespace: EBUSY).
 */
import { PROTECTED_DIRS, PROTECTED_FILES, PROTECTED_GIT_PARTS } from "./protected_names.ts";
import { isPlaceholder } from "./placeholders.ts";
import { lstat } from "./placeholder_records.ts";
import { commonDirProtected, isCommonGitDir, isGitInternalRoot } from "./git_internal.ts";
import { readSmallFile } from "../bash/small_file.ts";
import { type GitSettings, gitSettings, userConfigFiles } from "./git_config.ts";
import { normalizePath } from "../bash/lexical_path.ts";
import {
  enclosingRepositories,
  gitFileTarget,
  LINK_READ_LIMIT,
  namedDir,
  physicalParent,
} from "./git_pointers.ts";
import { mayCreateIn } from "./may_create.ts";
import { envrcSources } from "./envrc_sources.ts";
import { recordHeld } from "./held_paths.ts";
import { readLinkBytes } from "../bash/fd_calls.ts";
import { surelyMissing } from "../bash/surely_missing.ts";
import {
  type DirRead,
  forgetListings,
  readScanned,
  SCAN_DEPTH,
  SCAN_DIR_LIMIT,
  startScan,
} from "./scan_listings.ts";
import { linkedWorktrees, namesIn, submoduleRepositories } from "./git_dir_listings.ts";

/**
 * What an absent part of a git directory is held by: a file of this text, else an empty
 * directory. A `commondir` of `.` names the git directory itself (git reads a relative one from
 * there), which is what its absence means; an empty `config.worktree` sets nothing. git dies on a
 * directory or an empty file at `commondir`, and on a directory at `config.worktree`.
 */
const GIT_PART_TEXT: Readonly<Record<string, string>> = { commondir: ".\n", "config.worktree": "" };

/**
 * A path bound read-only over itself; `absent` ones are made first as placeholders: a file of
 * `text` where that is set (a `.git` part git would die on a directory at), else an empty
 * directory, which git and most tools pass over (not an empty file).
 */
export interface ProtectedPath {
  path: string;
  dir: boolean;
  absent: boolean;
  text?: string;
}

/** What a view protects inside its writable roots. */
export interface Protection {
  /** Protected paths, read-only. */
  paths: readonly ProtectedPath[];
  /** Directories between a writable root and a protected path, bound writable over themselves. */
  pins: readonly string[];
  /**
   * Absent protected paths an approved plan writes: left unbound, and no other sandbox may
   * hold a placeholder there while the plan runs.
   */
  lifted?: readonly string[];
  /**
   * Protected files that have other names (hard links): binding one name read-only leaves the
   * same file writable through the others, so a run is refused while any exists.
   */
  linked: readonly string[];
  /**
   * Write roots holding more than {@link SCAN_DIR_LIMIT} directories to scan: what the scan did
   * not read may hold a protected name, so a run is refused while any is.
   */
  unscanned?: readonly string[];
  /**
   * Directories below write roots holding a subdirectory whose name is not UTF-8 with a protected
   * name inside: that protection cannot be named, so a run is refused while any is.
   */
  unnamed?: readonly string[];
  /**
   * The view's masked paths (the kernel's policy file, state and socket directories), checked as
   * the pins are: a host rename over one (an atomic save of the policy) detaches its mask.
   */
  masks?: readonly string[];
}

/** The directory `path` (absolute) lies in. */
function dirname(path: string): string {
  return path.slice(0, path.lastIndexOf("/")) || "/";
}

/** Whether `path` is `root` or below it. */
function isWithin(path: string, root: string): boolean {
  return path === root || path.startsWith(`${root}/`);
}

/**
 * Where the symlink `link` leads, followed to its end (absolute, lexical for a dangling last
 * step), or null when it cannot be followed (a loop, an unreadable directory).
 */
function resolvedLink(link: string): string | null {
  try {
    return Deno.realPathSync(link);
  } catch {
    try {
      const to = Deno.readLinkSync(link);
      const dir = Deno.realPathSync(link.slice(0, link.lastIndexOf("/")) || "/");
      return normalizePath(to.startsWith("/") ? to : `${dir}/${to}`);
    } catch {
      return null;
    }
  }
}

/**
 * The listings the last {@link protection} of each write root read, by directory: reused while
 * they hold ({@link readScanned}).
 */
const lastReads = new Map<string, Map<string, DirRead>>();

/**
 * The directory whose scripts the hooks in `hooksDir` run: husky 9 names `X/_` as
 * `core.hooksPath`, and each hook there runs the script of its name in `X` (`X/_/h`), so `X`,
 * with `_` in it, is what must stay read-only; any other hooks directory is itself.
 */
function runHooksFrom(hooksDir: string): string {
  return hooksDir.endsWith("/_") ? dirname(hooksDir) : hooksDir;
}

/**
 * The protection of `roots` (real paths of writable mounts), less the `lifted` names: at each
 * root every protected name whether or not it exists (an absent one as a placeholder, so it
 * cannot be created), and of a `.git` there (a directory, or the git directory a `.git` file
 * names, the file itself protected too) the parts git reads as configuration or runs
 * ({@link protection}'s `protectRepository`); below a root, down to {@link SCAN_DEPTH} levels and
 * outside `node_modules`, every protected name and `.git` part that exists now, and every
 * repository's `commondir` and `config.worktree` whether or not they exist. A symlink at a
 * protected name protects its target instead, when that lies in a writable root.
 */
export function protection(roots: readonly string[], lifted: readonly string[]): Protection {
  const paths = new Map<string, ProtectedPath>();
  const linked = new Set<string>();
  const unscanned: string[] = [];
  const unnamed: string[] = [];
  const pins = new Set<string>();
  const creatable = new Map<string, boolean>();
  /**
   * Whether a placeholder can be made at absent `path` (one this kernel holds is there): where
   * the kernel may not create (another user's directory), a sandboxed run may not either, and a
   * bind of a path that could not be made would stop the sandbox from starting.
   */
  const holdable = (path: string) => {
    const dir = dirname(path);
    if (!creatable.has(dir)) creatable.set(dir, mayCreateIn(dir));
    return creatable.get(dir)! || isPlaceholder(path);
  };
  const protect = (root: string, path: string, dir: boolean, absent: boolean, text?: string) => {
    if (absent && !holdable(path)) return;
    paths.set(path, text === undefined ? { path, dir, absent } : { path, dir, absent, text });
    // a file with a second name (a directory's nlink counts its subdirectories)
    const info = dir || absent ? null : lstat(path);
    if (info?.isFile && (info.nlink ?? 1) > 1) linked.add(path);
    for (let up = path.slice(0, path.lastIndexOf("/")); up.length > root.length;) {
      pins.add(up);
      up = up.slice(0, up.lastIndexOf("/"));
    }
  };
  /** The writable root `path` lies below, if any (a writable / protects nothing). */
  const rootOf = (path: string) => roots.find((r) => r !== "/" && isWithin(path, r) && path !== r);
  /**
   * The writable root `path` is or lies below, if any: a directory a human's tool loads files
   * from (through a symlink at a protected name, or as a hooks directory) may be a root itself,
   * which is then read-only whole.
   */
  const rootAt = (path: string) => roots.find((r) => r !== "/" && isWithin(path, r));
  /**
   * A symlink at a protected name: what the human's tool loads through it is its target, so a
   * target inside a writable root is protected (an absent one held by a placeholder when its
   * directory exists: a file of `text` when that is set), and the link's own directories are
   * pinned.
   */
  const protectTarget = (link: string, text?: string) => {
    const target = resolvedLink(link);
    const root = target === null ? undefined : rootAt(target);
    if (target === null || root === undefined) return;
    const found = lstat(target);
    const absent = found === null || isPlaceholder(target, found);
    if (absent && lstat(target.slice(0, target.lastIndexOf("/")))?.isDirectory !== true) return;
    if (absent) protect(root, target, text === undefined, true, text);
    else protect(root, target, found!.isDirectory, false);
    pinLink(link);
  };
  /** Pins the directories between its writable root and the symlink `link`. */
  const pinLink = (link: string) => {
    const linkRoot = roots.find((r) => isWithin(link, r)) ?? link;
    for (let up = link.slice(0, link.lastIndexOf("/")); up.length > linkRoot.length;) {
      pins.add(up);
      up = up.slice(0, up.lastIndexOf("/"));
    }
  };
  const names = [...PROTECTED_FILES, ...PROTECTED_DIRS].filter((name) => !lifted.includes(name));
  // read once per view, not once per repository, and only when a view has one: reading the
  // user's config files took a quarter of a view's time in a project without any (issue 34)
  let userSettings: GitSettings | undefined;
  const home = Deno.env.get("HOME");
  let homePath: string | null | undefined;
  /** HOME's real path (roots are real paths), or null. */
  const realHome = () => {
    if (homePath === undefined) {
      try {
        homePath = home === undefined ? null : Deno.realPathSync(home);
      } catch {
        homePath = null;
      }
    }
    return homePath;
  };
  const user = () =>
    userSettings ??= gitSettings(userConfigFiles((name) => Deno.env.get(name)), home);
  const gitParts = PROTECTED_GIT_PARTS.filter((part) => !lifted.includes(part))
    .map((part) => part.slice(".git/".length));
  /**
   * Protects the part `part` of the repository directory `dir` (whose names are `listed`, when it
   * could be read: a name it lacks is absent, with no failed lstat) when it is in a writable root
   * and not lifted: what is there (a symlink's target), or when nothing is (a placeholder of this
   * kernel counts as nothing) and `hold`, a placeholder ({@link GIT_PART_TEXT}). Returns what is
   * there, a placeholder included, or null.
   */
  const protectPart = (
    dir: string,
    part: string,
    hold: boolean,
    listed: ReadonlySet<string> | null,
  ): Deno.FileInfo | null => {
    const at = `${dir}/${part}`;
    const found = listed === null || listed.has(part) ? lstat(at) : null;
    const root = rootOf(at);
    if (root === undefined || !gitParts.includes(part)) return found;
    if (found?.isSymlink) protectTarget(at, GIT_PART_TEXT[part]);
    else if (found !== null && !isPlaceholder(at, found)) {
      protect(root, at, found.isDirectory, false);
    } else if (hold) protect(root, at, !(part in GIT_PART_TEXT), true, GIT_PART_TEXT[part]);
    return found;
  };
  /**
   * The common directory of the git directory `gitDir`, whose `commondir` is `found` (its lstat,
   * or null): the directory it names (git takes `config`, `hooks` and `worktrees` from there),
   * else `gitDir` itself (also when the `commondir` is this kernel's placeholder, which names it).
   */
  const commonDirOf = (gitDir: string, found: Deno.FileInfo | null): string => {
    const at = `${gitDir}/commondir`;
    const named = found === null || isPlaceholder(at, found)
      ? null
      : readSmallFile(at, LINK_READ_LIMIT);
    return (named === null ? null : namedDir(named, gitDir)) ?? gitDir;
  };
  /**
   * Protects the `config` and `hooks` of `common`, the common directory a `commondir` names
   * (`hold`: absent ones as placeholders); when it is missing in a writable root it is held by an
   * empty directory, so that none can be made there. Returns its names, null when unread.
   */
  const protectNamedCommon = (common: string, hold: boolean): ReadonlySet<string> | null => {
    // this kernel's placeholder there is still missing: taken for the human's directory, the
    // next view held config/ and hooks/ in it, and the first sandbox's could not be removed
    const found = lstat(common);
    const missing = found === null || isPlaceholder(common, found);
    const listed = missing ? null : namesIn(common);
    if (listed !== null || (!missing && found.isDirectory)) {
      for (const part of ["config", "hooks"]) protectPart(common, part, hold, listed);
      return listed;
    }
    const root = rootOf(common);
    const parent = root === undefined ? null : lstat(dirname(common));
    if (missing && parent?.isDirectory) protect(root!, common, true, true);
    return null;
  };
  /**
   * Protects the `commondir` and `config.worktree` of the git directory `gitDir` (whose names are
   * `listed`, when read), held by placeholders when absent wherever the directory is, since their
   * absence is the usual state (below a root too); returns its common directory and what is at its
   * `config.worktree`.
   */
  const protectOwn = (gitDir: string, listed: ReadonlySet<string> | null) => {
    const common = commonDirOf(gitDir, protectPart(gitDir, "commondir", true, listed));
    return { common, worktreeConfig: protectPart(gitDir, "config.worktree", true, listed) };
  };
  /**
   * Protects the `config` and `hooks` of the common directory `common` of the git directory
   * `gitDir` (whose names are `listed`; `hold`: absent ones as placeholders); returns the names
   * of `common`, null when unread.
   */
  const protectCommon = (
    gitDir: string,
    listed: ReadonlySet<string> | null,
    common: string,
    hold: boolean,
  ): ReadonlySet<string> | null => {
    if (common !== gitDir) return protectNamedCommon(common, hold);
    for (const part of ["config", "hooks"]) protectPart(gitDir, part, hold, listed);
    return listed;
  };
  /**
   * Protects the file `at` a repository's config includes when it lies in a writable root: what
   * is there (a symlink's target), else, when its directory exists, a file of `text` (git reads
   * an empty one as an empty config; it dies on a directory there), or an empty directory when
   * `text` is null (a .envrc's `source_env_if_exists` passes over it; git status shows none).
   */
  const protectIncluded = (included: string, text: string | null = "") => {
    // as for core.hooksPath: where git finds it, through any symlink on the way
    const at = physicalParent(included);
    const root = at === null ? undefined : rootOf(at);
    if (at === null || root === undefined) return;
    const found = lstat(at);
    if (found?.isSymlink) protectTarget(at, text ?? undefined);
    else if (found !== null && !isPlaceholder(at, found)) {
      protect(root, at, found.isDirectory, false);
    } else if (lstat(dirname(at))?.isDirectory) {
      protect(root, at, text === null, true, text ?? undefined);
    }
  };
  /**
   * Protects, where they lie in a writable root, the hooks directory and included files (config:
   * held by an empty file when absent) `settings` name, of a repository with its work tree in
   * `dir`, or of the user's config alone (`dir` null: a relative hooks path names nothing).
   */
  const protectGitSettings = (dir: string | null, settings: GitSettings) => {
    for (const at of gitParts.includes("config") ? settings.includes : []) protectIncluded(at);
    const { hooksPath } = settings;
    const absolute = hooksPath?.startsWith("/") ? hooksPath : null;
    const named = absolute ?? (hooksPath && dir !== null ? `${dir}/${hooksPath}` : null);
    // where git finds it: a symlink on the way (an agent's `link` to HOME) leads elsewhere, and
    // the kernel would make a placeholder there, outside every grant
    const at = gitParts.includes("hooks") && named !== null
      ? physicalParent(runHooksFrom(normalizePath(named)))
      : null;
    const hooksRoot = at === null ? undefined : rootAt(at);
    if (at !== null && hooksRoot !== undefined) {
      const found = lstat(at);
      if (found?.isSymlink) protectTarget(at);
      else {
        const absent = found === null || isPlaceholder(at, found);
        if (!absent || lstat(dirname(at))?.isDirectory) protect(hooksRoot, at, true, absent);
      }
    }
  };
  /**
   * Protects the repository whose git directory is `gitDir`, with a `.git` in `dir` (`hold`: at a
   * root): the `commondir` and `config.worktree` of `gitDir`, of each linked worktree's
   * (`worktrees/ID`) and of its submodules' repositories (`modules/…`), absent ones held; the
   * `config` and `hooks` of their common directories (absent ones held only for `gitDir` at a
   * root), and, when in a writable root, the hooks directory its config (or `config.worktree`,
   * or the user's config before them) names with `core.hooksPath` and the files they include.
   */
  const protectRepository = (dir: string, gitDir: string, hold: boolean) => {
    const names = namesIn(gitDir);
    const has = (listed: ReadonlySet<string> | null, name: string) =>
      listed === null || listed.has(name);
    const { common, worktreeConfig } = protectOwn(gitDir, names);
    const commonNames = protectCommon(gitDir, names, common, hold);
    const own = worktreeConfig !== null && !isPlaceholder(`${gitDir}/config.worktree`);
    const repository = gitSettings([
      ...(has(commonNames, "config") ? [`${common}/config`] : []),
      ...(own ? [`${gitDir}/config.worktree`] : []),
    ], home);
    // git reads the user's config first: the repository's own setting wins
    protectGitSettings(dir, {
      hooksPath: repository.hooksPath ?? user().hooksPath,
      includes: [...user().includes, ...repository.includes],
    });
    const worktrees = has(commonNames, "worktrees") ? linkedWorktrees(common) : [];
    const worktreesRoot = worktrees === null ? rootOf(`${common}/worktrees`) : undefined;
    // too many to look at: all of them read-only, none past the limit left writable
    if (worktreesRoot !== undefined) protect(worktreesRoot, `${common}/worktrees`, true, false);
    for (const worktree of worktrees ?? []) {
      const named = protectOwn(worktree, namesIn(worktree)).common;
      if (named !== common && named !== worktree) protectNamedCommon(named, false);
    }
    const submodules = has(names, "modules") ? submoduleRepositories(gitDir) : [];
    const modulesRoot = submodules === null ? rootOf(`${gitDir}/modules`) : undefined;
    if (modulesRoot !== undefined) protect(modulesRoot, `${gitDir}/modules`, true, false);
    for (const repository of submodules ?? []) {
      const listed = namesIn(repository);
      protectCommon(repository, listed, protectOwn(repository, listed).common, false);
    }
  };
  /** Protects the entry `name` (a protected name or `.git`) of `dir`, `info` its lstat. */
  const visit = (root: string, dir: string, name: string, info: Deno.FileInfo | null) => {
    const path = `${dir}/${name}`;
    if (name === ".git") {
      // git follows a symlink at .git: to a directory, that is the repository (when it has a
      // HEAD: git passes over any other, and no placeholder is made in it); to a file, it is read
      // as a .git file
      const target = info?.isSymlink ? resolvedLink(path) : null;
      const kind = target === null ? info : lstat(target);
      if (target !== null && kind?.isDirectory) {
        if (lstat(`${target}/HEAD`) === null) return;
        pinLink(path);
        protectRepository(dir, target, dir === root);
      } else if (target !== null && kind?.isFile) {
        protectTarget(path);
        const gitDir = gitFileTarget(target, dir);
        if (gitDir !== null && lstat(gitDir)?.isDirectory) {
          protectRepository(dir, gitDir, dir === root);
        }
      } else if (info?.isDirectory) protectRepository(dir, path, dir === root);
      else if (info?.isFile) {
        protect(root, path, false, false);
        const gitDir = gitFileTarget(path, dir);
        if (gitDir !== null && lstat(gitDir)?.isDirectory) {
          protectRepository(dir, gitDir, dir === root);
        }
      }
      return;
    }
    // what a .envrc has direnv load runs as the .envrc does (envrc_sources.ts)
    if (name === ".envrc" && info !== null && !isPlaceholder(path, info)) {
      for (const file of envrcSources(path, dir, home)) protectIncluded(file, null);
    }
    if (info?.isSymlink) return protectTarget(path);
    const absent = info === null || isPlaceholder(path, info);
    if (!absent || dir === root) {
      // HOME's absent dotfiles are held by empty files, which the human's git and shells read as
      // nothing (at a directory, git on the host died on ~/.gitconfig, bash told of ~/.bashrc);
      // a project's by empty directories, which git neither lists nor adds
      const file = absent && dir === realHome() && PROTECTED_FILES.includes(name);
      protect(root, path, absent ? !file : info!.isDirectory, absent, file ? "" : undefined);
    }
  };
  startScan();
  for (const root of roots) {
    if (root === "/") continue; // a writable / is no project: nothing there is protected
    if (isCommonGitDir(root)) {
      // a linked worktree's common directory (M-ONB-3): its entries, then its repository's parts;
      // below it are git's own files, and its objects, refs and logs are roots of their own
      // a placeholder of this kernel there (an absent modules/) is still absent: taken for an
      // entry, the next view differed, and a second sandbox bound it without holding it
      for (const p of commonDirProtected(root, roots)) {
        protect(root, p.path, p.dir, p.absent || (p.dir && isPlaceholder(p.path)));
      }
      protectRepository(root, root, true);
      continue;
    }
    const last = lastReads.get(root) ?? new Map<string, DirRead>();
    const reads = new Map<string, DirRead>();
    // a root's path may name another directory now (an ancestor renamed): watched again
    const top = readScanned(root, last, false, false);
    // inside a git directory (a linked worktree's, M-ONB-3) no absent name is held
    const internal = isGitInternalRoot(root);
    // a monorepo's package: the hooks its repository runs and the files its config includes
    if (!internal) {
      for (const r of enclosingRepositories(root)) protectRepository(r.top, r.gitDir, false);
    }
    // a name the root's listing lacks is absent: no failed lstat for each (they cost 20 µs)
    for (const name of [...names, ".git"]) {
      const there = top === null || top.found.includes(name);
      const info = there ? lstat(`${root}/${name}`) : null;
      if (internal && (info === null || isPlaceholder(`${root}/${name}`, info))) continue;
      visit(root, root, name, info);
    }
    let level = [root];
    /** Whether the listing of the parent of each of `level` was the last scan's, reused. */
    let parentReused = [false];
    scan: for (let depth = 1; depth <= SCAN_DEPTH && level.length > 0; depth++) {
      const next: string[] = [];
      const nextParentReused: boolean[] = [];
      for (let i = 0; i < level.length; i++) {
        const dir = level[i];
        const read = dir === root
          ? top
          : readScanned(dir, last, parentReused[i], depth === SCAN_DEPTH);
        if (read === null) continue; // unreadable or gone
        const reused = read === last.get(dir);
        reads.set(dir, read);
        // a bare repository: git runs its hooks (a push into it) and reads its config
        if (read.gitDir) protectRepository(dir, dir, dir === root);
        for (const name of read.found) {
          if (dir === root) continue; // the root's: done above
          if (names.includes(name) || name === ".git") {
            visit(root, dir, name, lstat(`${dir}/${name}`));
          }
        }
        if (read.unnamed) unnamed.push(dir);
        if (depth === SCAN_DEPTH) continue; // its subdirectories are past the depth
        const lifted = read.protectedSubdirs.filter((name) => !names.includes(name));
        for (const path of [...read.subdirs, ...lifted.map((name) => `${dir}/${name}`)]) {
          next.push(path);
          nextParentReused.push(reused);
        }
        // more directories than a scan reads: what is left unread is refused, not left writable
        if (read.more || reads.size + next.length > SCAN_DIR_LIMIT) {
          unscanned.push(root);
          break scan;
        }
      }
      level = next;
      parentReused = nextParentReused;
    }
    lastReads.set(root, reads);
    // what this scan no longer reads is watched no longer, unless another root's scan reads it
    forgetListings(
      [...last.keys()].filter((dir) => !reads.has(dir)),
      (dir) => [...lastReads.values()].some((other) => other.has(dir)),
    );
  }
  // outside every root, the human's start-up files in HOME and git's own config files may lead
  // into one (a dotfiles project: ~/.bashrc -> proj/bashrc): read-only where they lead (found by
  // readlink(2), not lstat: most names are absent, and a failed lstat's exception costs ~20 µs)
  const homeDir = realHome();
  if (homeDir !== null && roots.some((root) => root !== "/")) {
    for (const name of names.filter((n) => readLinkBytes(`${homeDir}/${n}`) !== null)) {
      protectTarget(`${homeDir}/${name}`, PROTECTED_FILES.includes(name) ? "" : undefined);
    }
    const gitFiles = userConfigFiles((name) => Deno.env.get(name));
    const present = names.includes(".gitconfig") ? gitFiles.filter((f) => !surelyMissing(f)) : [];
    for (const file of present) protectTarget(file, "");
    // the human's git in every repository reads what the user's config includes and runs the
    // hooks it names: protected in a root holding no repository too (only files there are read)
    if (present.length > 0) protectGitSettings(null, userSettings ??= gitSettings(present, home));
  }
  recordHeld(roots, lifted, paths.values());
  const sorted = <T>(list: T[], key: (t: T) => string) =>
    list.sort((a, b) => (key(a) < key(b) ? -1 : 1));
  return {
    paths: sorted([...paths.values()], (p) => p.path),
    pins: sorted([...pins], (p) => p),
    linked: sorted([...linked], (p) => p),
    ...(unscanned.length > 0 ? { unscanned } : {}),
    ...(unnamed.length > 0 ? { unnamed } : {}),
  };
}
