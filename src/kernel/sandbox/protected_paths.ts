/**
 * The protected paths of the writable roots of a view (P-SBX-6): what is bound read-only over
 * itself, and which directories are pinned so that renaming or removing a parent cannot take a
 * protection away (a mount point cannot be renamed or removed inside its namespace: EBUSY).
 */
import { PROTECTED_DIRS, PROTECTED_FILES, PROTECTED_GIT_PARTS } from "./protected_names.ts";
import { isPlaceholder } from "./placeholders.ts";
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
 * The protection of `roots` (real paths of writable mounts), less the `lifted` names: at each
 * root every protected name whether or not it exists (an absent one as a placeholder
 * directory, so it cannot be created), and `.git/hooks`, `.git/config` of a `.git` directory (the `.git` file
 * itself); below a root, down to {@link SCAN_DEPTH} levels and outside `node_modules`, every
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
    const absent = found === null || isPlaceholder(target);
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
          const absent = found === null || isPlaceholder(at);
          // at the root a missing part is held by a placeholder; below it, only what exists
          if (found?.isSymlink) {
            protectTarget(at);
            continue;
          }
          if (!absent || dir === root) protect(root, at, absent || part === "hooks", absent);
        }
      }
      return;
    }
    if (info?.isSymlink) return protectTarget(path);
    const absent = info === null || isPlaceholder(path);
    if (!absent || dir === root) {
      protect(root, path, absent || info!.isDirectory, absent);
    }
  };
  for (const root of roots) {
    if (root === "/") continue; // a writable / is no project: nothing there is protected
    for (const name of [...names, ".git"]) visit(root, root, name, lstat(`${root}/${name}`));
    let level = [root];
    let seen = 0;
    for (let depth = 1; depth <= SCAN_DEPTH && level.length > 0; depth++) {
      const next: string[] = [];
      for (const dir of level) {
        if (seen >= SCAN_ENTRY_LIMIT) break;
        let entries: Deno.DirEntry[];
        try {
          entries = [...Deno.readDirSync(dir)];
          seen += entries.length;
        } catch {
          continue; // unreadable or gone
        }
        for (const entry of entries) {
          const path = `${dir}/${entry.name}`;
          if (names.includes(entry.name) || entry.name === ".git") {
            if (dir !== root) visit(root, dir, entry.name, lstat(path)); // the root's: done above
          } else if (entry.isDirectory && !UNSCANNED.includes(entry.name)) next.push(path);
        }
      }
      level = next;
    }
  }
  const sorted = <T>(list: T[], key: (t: T) => string) =>
    list.sort((a, b) => (key(a) < key(b) ? -1 : 1));
  return {
    paths: sorted([...paths.values()], (p) => p.path),
    pins: sorted([...pins], (p) => p),
    linked: sorted([...linked], (p) => p),
  };
}
