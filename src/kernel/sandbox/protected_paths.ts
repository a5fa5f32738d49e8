/**
 * The protected paths of the writable roots of a view (P-SBX-6): what is bound read-only over
 * itself, and which directories are pinned so that renaming or removing a parent cannot take a
 * protection away (a mount point cannot be renamed or removed inside its namespace: EBUSY).
 */
import { PROTECTED_DIRS, PROTECTED_FILES, PROTECTED_GIT_PARTS } from "./protected_names.ts";
import { isPlaceholder } from "./placeholders.ts";
import { readSmallFile } from "../bash/small_file.ts";
import { normalizePath } from "../bash/lexical_path.ts";

/** Directory levels below a write root searched for protected names that exist at exec start. */
export const SCAN_DEPTH = 5;

/**
 * Most directory entries read by one scan of one root: in a huge tree (a home directory with
 * caches) the protections found so far and those at the root hold, rather than every exec
 * stalling on the scan.
 */
export const SCAN_ENTRY_LIMIT = 10_000;

/**
 * Directories the scan does not enter: installed dependencies, whose nested editor and shell
 * files no tool of the human's loads, and which are most of a project's directories.
 */
const UNSCANNED = ["node_modules"];

/** Most directories below a `.git/modules` looked at for submodules' repositories. */
const MODULE_DIR_LIMIT = 200;

/**
 * The repositories of the submodules of the `.git` directory `gitDir`, nested ones included:
 * each directory below `modules/` (a submodule's name may hold `/`) that has a `HEAD`. Git reads
 * their `config` and runs their `hooks` whenever it enters a submodule, as `git status` at the
 * top does for every submodule in the index.
 */
function submoduleRepositories(gitDir: string): string[] {
  const found: string[] = [];
  const pending = [`${gitDir}/modules`];
  for (let seen = 0; pending.length > 0 && seen < MODULE_DIR_LIMIT; seen++) {
    const dir = pending.pop()!;
    let entries: Deno.DirEntry[];
    try {
      entries = [...Deno.readDirSync(dir)];
    } catch {
      continue; // absent or unreadable
    }
    if (entries.some((e) => e.name === "HEAD" && e.isFile)) {
      found.push(dir);
      pending.push(`${dir}/modules`);
    } else {
      for (const e of entries) if (e.isDirectory) pending.push(`${dir}/${e.name}`);
    }
  }
  return found;
}

/**
 * Whether a repository's config (`gitConfig`) turns per-worktree config on
 * (`extensions.worktreeConfig`): git then reads `config.worktree` beside it. A config that cannot
 * be read counts as on.
 */
function worktreeConfigOn(gitConfig: string): boolean {
  if (lstat(gitConfig) === null) return false;
  const text = readSmallFile(gitConfig, CONFIG_READ_LIMIT);
  return text === null || /^\s*worktreeconfig\s*(=\s*(true|yes|on|1)\s*)?([#;].*)?$/im.test(text);
}

/** Largest repository config file read for its `core.hooksPath`. */
const CONFIG_READ_LIMIT = 1024 * 1024;

/**
 * The `core.hooksPath` a repository's own config file (`gitConfig`) sets, as written (the last
 * one wins), or null: git runs the hooks there instead of `.git/hooks` (husky sets `.husky`).
 * Includes are not followed.
 */
function configuredHooksPath(gitConfig: string): string | null {
  // a FIFO an agent made there would block the kernel, a huge file hold its memory; one swapped
  // in after a check (by a run of the agent's still going) too: read non-blocking and bounded
  if (!lstat(gitConfig)?.isFile) return null;
  const text = readSmallFile(gitConfig, CONFIG_READ_LIMIT);
  if (text === null) return null;
  let inCore = false;
  let found: string | null = null;
  for (const raw of text.split("\n")) {
    const line = raw.trim();
    const section = /^\[\s*([A-Za-z0-9.-]+)\s*\]/.exec(line);
    if (line.startsWith("[")) inCore = section !== null && section[1].toLowerCase() === "core";
    const entry = inCore ? /^hookspath\s*=\s*(.*)$/i.exec(line) : null;
    if (entry === null) continue;
    const value = entry[1].replace(/^"((?:[^"\\]|\\.)*)".*$|^([^#;]*).*$/, "$1$2").trim();
    found = value.replace(/\\(.)/g, "$1");
  }
  return found;
}

/**
 * A path bound read-only over itself; `absent` ones are made first as placeholders, always empty
 * directories: git and most tools pass over an empty directory, not over an empty file.
 */
export interface ProtectedPath {
  path: string;
  dir: boolean;
  absent: boolean;
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
}

/** The entry at `path` without following a final symlink, or null when there is none. */
function lstat(path: string): Deno.FileInfo | null {
  try {
    return Deno.lstatSync(path);
  } catch {
    return null;
  }
}

/** Whether `path` is `root` or below it. */
function isWithin(path: string, root: string): boolean {
  return path === root || path.startsWith(`${root}/`);
}

/**
 * `path` with its parent directory resolved through symlinks (its last name kept), or null when
 * that directory does not exist.
 */
function physicalParent(path: string): string | null {
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
 * How long after a directory last changed its listing is read again at every scan: a change
 * within the same tick of the file system's coarse clock (and, as Deno reports it, the same
 * second of its ctime) would leave the directory's stamp as it was.
 */
const RACY_MS = 2000;

/** What a scan needs of one directory's listing. */
interface DirRead {
  /** The directory's (device, inode, mtime, ctime) when it was read. */
  stamp: string;
  /** Whether the stamp tells every later change: the directory had not changed for {@link RACY_MS}. */
  settled: boolean;
  /** How many entries it had (at most {@link SCAN_ENTRY_LIMIT}: no more are read). */
  count: number;
  /** Whether that was all of them. */
  complete: boolean;
  /** Its entries that are protected names or `.git`, whatever is lifted. */
  found: string[];
  /** Its subdirectories but `node_modules`: a scan enters those that are not protected names. */
  subdirs: string[];
}

/**
 * The listings the last {@link protection} of each write root read, by directory: reused while
 * their stamps hold.
 */
const lastReads = new Map<string, Map<string, DirRead>>();

/**
 * The entries below each write root (protected names and `.git`) that scans found: one cut short
 * by {@link SCAN_ENTRY_LIMIT} still protects those that exist in the directories it did not read,
 * so flooding a project with entries cannot lift a protection found before.
 */
const foundBefore = new Map<string, Set<string>>();

/** The stamp of directory `info`, or null when it has no change time. */
function stampOf(info: Deno.FileInfo): string | null {
  if (info.ctime === null || info.mtime === null) return null;
  return `${info.dev}:${info.ino}:${info.mtime.getTime()}:${info.ctime.getTime()}`;
}

/**
 * The listing of `dir` as a scan needs it, or null when it cannot be read: the last scan's when
 * the directory has its stamp of then and had settled before it was read (an entry added,
 * removed or renamed since changes the stamp), else read now.
 */
function readScanned(dir: string, last: ReadonlyMap<string, DirRead>): DirRead | null {
  let info: Deno.FileInfo;
  try {
    info = Deno.statSync(dir);
  } catch {
    return null;
  }
  const stamp = stampOf(info);
  const known = last.get(dir);
  if (known !== undefined && known.settled && stamp !== null && known.stamp === stamp) return known;
  const readAt = Date.now();
  // A directory of millions of entries (an agent's) read whole took the kernel seconds and
  // hundreds of MiB at every exec: no scan reads past the limit anyway.
  const entries: Deno.DirEntry[] = [];
  let complete = true;
  try {
    for (const entry of Deno.readDirSync(dir)) {
      if (entries.length === SCAN_ENTRY_LIMIT) {
        complete = false;
        break;
      }
      entries.push(entry);
    }
  } catch {
    return null;
  }
  const protectedName = (name: string) =>
    name === ".git" || PROTECTED_FILES.includes(name) || PROTECTED_DIRS.includes(name);
  return {
    stamp: stamp ?? "",
    settled: stamp !== null && info.ctime!.getTime() < readAt - RACY_MS,
    count: entries.length,
    complete,
    found: entries.filter((e) => protectedName(e.name)).map((e) => e.name),
    subdirs: entries.filter((e) => e.isDirectory && !UNSCANNED.includes(e.name)).map((e) => e.name),
  };
}

/**
 * The protection of `roots` (real paths of writable mounts), less the `lifted` names: at each
 * root every protected name whether or not it exists (an absent one as a placeholder
 * directory, so it cannot be created), and `.git/hooks`, `.git/config` of a `.git` directory (the `.git` file
 * itself), the hooks directory its config names (`core.hooksPath`, when in a writable root) and
 * the existing `hooks` and `config` of its submodules' repositories (`.git/modules/…`);
 * below a root, down to {@link SCAN_DEPTH} levels and outside `node_modules`, every
 * protected name and `.git` part that exists now. A symlink at a protected name protects its
 * target instead, when that lies in a writable root.
 */
export function protection(roots: readonly string[], lifted: readonly string[]): Protection {
  const paths = new Map<string, ProtectedPath>();
  const linked = new Set<string>();
  const pins = new Set<string>();
  const protect = (root: string, path: string, dir: boolean, absent: boolean) => {
    paths.set(path, { path, dir, absent });
    // a file with a second name (a directory's nlink counts its subdirectories)
    const info = dir || absent ? null : lstat(path);
    if (info?.isFile && (info.nlink ?? 1) > 1) linked.add(path);
    for (let up = path.slice(0, path.lastIndexOf("/")); up.length > root.length;) {
      pins.add(up);
      up = up.slice(0, up.lastIndexOf("/"));
    }
  };
  /**
   * A symlink at a protected name: what the human's tool loads through it is its target, so a
   * target inside a writable root is protected (an absent one held by a placeholder when its
   * directory exists), and the link's own directories are pinned.
   */
  const protectTarget = (link: string) => {
    const target = resolvedLink(link);
    const root = target === null ? undefined : roots.find((r) => r !== "/" && isWithin(target, r));
    if (target === null || root === undefined) return;
    const found = lstat(target);
    const absent = found === null || isPlaceholder(target, found);
    if (absent && lstat(target.slice(0, target.lastIndexOf("/")))?.isDirectory !== true) return;
    protect(root, target, absent || found!.isDirectory, absent);
    const linkRoot = roots.find((r) => isWithin(link, r)) ?? link;
    for (let up = link.slice(0, link.lastIndexOf("/")); up.length > linkRoot.length;) {
      pins.add(up);
      up = up.slice(0, up.lastIndexOf("/"));
    }
  };
  const names = [...PROTECTED_FILES, ...PROTECTED_DIRS].filter((name) => !lifted.includes(name));
  const gitParts = PROTECTED_GIT_PARTS.filter((part) => !lifted.includes(part))
    .map((part) => part.slice(".git/".length));
  /** Protects the entry `name` (a protected name or `.git`) of `dir`, `info` its lstat. */
  const visit = (root: string, dir: string, name: string, info: Deno.FileInfo | null) => {
    const path = `${dir}/${name}`;
    if (name === ".git") {
      if (info?.isFile) protect(root, path, false, false);
      else if (info?.isDirectory) {
        for (const part of gitParts) {
          const at = `${path}/${part}`;
          const found = lstat(at);
          const absent = found === null || isPlaceholder(at, found);
          // at the root a missing part is held by a placeholder; below it, only what exists (and
          // a missing config.worktree only where git would read it)
          if (found?.isSymlink) {
            protectTarget(at);
            continue;
          }
          const held = dir === root &&
            (part !== "config.worktree" || worktreeConfigOn(`${path}/config`));
          if (!absent || held) protect(root, at, absent || part === "hooks", absent);
        }
        // the hooks directory the repository's config names instead of .git/hooks, when it
        // lies in a writable root (held by a placeholder when missing)
        const hooksPath = gitParts.includes("hooks") ? configuredHooksPath(`${path}/config`) : null;
        if (hooksPath) {
          // where git finds it: a symlink on the way (an agent's `link` to HOME) leads elsewhere,
          // and the kernel would make a placeholder there, outside every grant
          const at = physicalParent(
            normalizePath(hooksPath.startsWith("/") ? hooksPath : `${dir}/${hooksPath}`),
          );
          const hooksRoot = at === null
            ? undefined
            : roots.find((r) => r !== "/" && isWithin(at, r) && at !== r);
          const found = hooksRoot === undefined ? null : lstat(at!);
          if (found?.isSymlink) protectTarget(at!);
          else if (hooksRoot !== undefined) {
            const absent = found === null || isPlaceholder(at!, found);
            const parent = lstat(at!.slice(0, at!.lastIndexOf("/")));
            if (!absent || parent?.isDirectory) protect(hooksRoot, at!, true, absent);
          }
        }
        // the submodules' repositories: only what exists, as below a root
        for (const repository of submoduleRepositories(path)) {
          for (const part of gitParts) {
            const at = `${repository}/${part}`;
            const found = lstat(at);
            if (found?.isSymlink) protectTarget(at);
            else if (found !== null && !isPlaceholder(at, found)) {
              protect(root, at, found.isDirectory, false);
            }
          }
        }
      }
      return;
    }
    if (info?.isSymlink) return protectTarget(path);
    const absent = info === null || isPlaceholder(path, info);
    if (!absent || dir === root) {
      protect(root, path, absent || info!.isDirectory, absent);
    }
  };
  for (const root of roots) {
    if (root === "/") continue; // a writable / is no project: nothing there is protected
    const last = lastReads.get(root) ?? new Map<string, DirRead>();
    const reads = new Map<string, DirRead>();
    const found = new Set<string>();
    const top = readScanned(root, last);
    // a name the root's listing lacks is absent: no failed lstat for each (they cost 20 µs)
    for (const name of [...names, ".git"]) {
      const there = top === null || !top.complete || top.found.includes(name);
      visit(root, root, name, there ? lstat(`${root}/${name}`) : null);
    }
    let level = [root];
    let seen = 0;
    for (let depth = 1; depth <= SCAN_DEPTH && level.length > 0; depth++) {
      const next: string[] = [];
      for (const dir of level) {
        if (seen >= SCAN_ENTRY_LIMIT) break;
        const read = dir === root ? top : readScanned(dir, last);
        if (read === null) continue; // unreadable or gone
        reads.set(dir, read);
        seen += read.count;
        for (const name of read.found) {
          if (dir === root) continue; // the root's: done above
          found.add(`${dir}/${name}`);
          if (names.includes(name) || name === ".git") {
            visit(root, dir, name, lstat(`${dir}/${name}`));
          }
        }
        for (const name of read.subdirs) {
          if (!names.includes(name) && name !== ".git") next.push(`${dir}/${name}`);
        }
      }
      level = next;
    }
    for (const path of foundBefore.get(root) ?? []) {
      const dir = path.slice(0, path.lastIndexOf("/"));
      // read whole this time: what is still there was found again
      if (reads.get(dir)?.complete) continue;
      const name = path.slice(dir.length + 1);
      const info = lstat(path);
      if (info === null) continue;
      found.add(path);
      if (names.includes(name) || name === ".git") visit(root, dir, name, info);
    }
    foundBefore.set(root, found);
    lastReads.set(root, reads);
  }
  const sorted = <T>(list: T[], key: (t: T) => string) =>
    list.sort((a, b) => (key(a) < key(b) ? -1 : 1));
  return {
    paths: sorted([...paths.values()], (p) => p.path),
    pins: sorted([...pins], (p) => p),
    linked: sorted([...linked], (p) => p),
  };
}
