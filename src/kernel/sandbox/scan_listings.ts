/**
 * The directory listings the protection scan (P-SBX-6, `protected_paths.ts`) reads, and when a
 * listing of the last scan still holds: an inotify watch placed before the read has seen no change
 * of it since ({@link DirChanges}), or, where none can be placed, its stamp is as then.
 */
import { PROTECTED_DIRS, PROTECTED_FILES } from "./protected_names.ts";
import { DirChanges } from "./dir_changes.ts";

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
 * The first `limit` entries of `dir` and whether that was all of them, or null when it cannot
 * be read: a directory of millions (an agent's) is never read whole.
 */
export function someEntries(
  dir: string,
  limit: number,
): { entries: Deno.DirEntry[]; complete: boolean } | null {
  const entries: Deno.DirEntry[] = [];
  try {
    for (const entry of Deno.readDirSync(dir)) {
      if (entries.length === limit) return { entries, complete: false };
      entries.push(entry);
    }
  } catch {
    return null;
  }
  return { entries, complete: true };
}

/**
 * How long after a directory last changed its listing is read again at every scan: a change
 * within the same tick of the file system's coarse clock (and, as Deno reports it, the same
 * second of its ctime) would leave the directory's stamp as it was.
 */
const RACY_MS = 2000;

/** What a scan needs of one directory's listing. */
export interface DirRead {
  /** The directory's (device, inode, mtime, ctime) when it was read. */
  stamp: string;
  /** Whether the stamp tells every later change: the directory had not changed for {@link RACY_MS}. */
  settled: boolean;
  /** The token of the watch placed before the read ({@link DirChanges.watch}), or null: stamped. */
  token: number | null;
  /** How many entries it had (at most {@link SCAN_ENTRY_LIMIT}: no more are read). */
  count: number;
  /** Whether that was all of them. */
  complete: boolean;
  /** Its entries that are protected names or `.git`, whatever is lifted. */
  found: string[];
  /** Its subdirectories but `node_modules`: a scan enters those that are not protected names. */
  subdirs: string[];
  /**
   * Whether it is a git directory as git tells one (a `HEAD`, `objects/` and `refs/`): a bare
   * repository, whose hooks and config git runs and reads as those of a `.git`.
   */
  gitDir: boolean;
}

/** The inotify instance that tells which scanned directories changed, or null: each is stat'ed. */
const changes = DirChanges.open();

/** Takes in which watched directories changed since the last scan: call it when a scan starts. */
export function startScan(): void {
  changes?.collect();
}

/** Stops watching each directory of `dirs` that `keep` does not hold (no scan reads it now). */
export function forgetListings(dirs: Iterable<string>, keep: (dir: string) => boolean): void {
  changes?.forget(dirs, keep);
}

/** The stamp of directory `info`, or null when it has no change time. */
function stampOf(info: Deno.FileInfo): string | null {
  if (info.ctime === null || info.mtime === null) return null;
  return `${info.dev}:${info.ino}:${info.mtime.getTime()}:${info.ctime.getTime()}`;
}

/**
 * The listing of `dir` as a scan needs it, or null when it cannot be read: the last scan's when
 * the watch placed before it was read has seen no change since ({@link changes}), or, where the
 * directory cannot be watched, when it has its stamp of then and had settled before it was read
 * (an entry added, removed or renamed since changes the stamp); else read now. A watch follows
 * its directory, not its path: unless `samePath` (its parent's listing was reused, so the name
 * in it still names what it named), the path is watched again first, and another watch than
 * before means another directory (an ancestor renamed away and made again).
 */
export function readScanned(
  dir: string,
  last: ReadonlyMap<string, DirRead>,
  samePath: boolean,
): DirRead | null {
  const known = last.get(dir);
  const holds = () => known?.token != null && changes!.unchanged(dir, known.token);
  if (samePath && holds()) return known!;
  // before the read: a change after it is an event
  const token = changes?.watch(dir) ?? null;
  if (token !== null) return holds() ? known! : readListing(dir, null, token);
  let info: Deno.FileInfo;
  try {
    info = Deno.statSync(dir);
  } catch {
    return null;
  }
  const stamp = stampOf(info);
  if (known !== undefined && known.settled && stamp !== null && known.stamp === stamp) return known;
  return readListing(dir, info, null);
}

/**
 * The listing of `dir` read now, with the stamp of `info` (its stat before the read), or with the
 * `token` of its watch ({@link changes}) instead.
 */
function readListing(
  dir: string,
  info: Deno.FileInfo | null,
  token: number | null,
): DirRead | null {
  const stamp = info === null ? null : stampOf(info);
  const readAt = Date.now();
  // A directory of millions of entries (an agent's) read whole took the kernel seconds and
  // hundreds of MiB at every exec: no scan reads past the limit anyway.
  const read = someEntries(dir, SCAN_ENTRY_LIMIT);
  if (read === null) return null;
  const { entries, complete } = read;
  const protectedName = (name: string) =>
    name === ".git" || PROTECTED_FILES.includes(name) || PROTECTED_DIRS.includes(name);
  return {
    stamp: stamp ?? "",
    settled: stamp !== null && info!.ctime!.getTime() < readAt - RACY_MS,
    token,
    count: entries.length,
    complete,
    found: entries.filter((e) => protectedName(e.name)).map((e) => e.name),
    subdirs: entries.filter((e) => e.isDirectory && !UNSCANNED.includes(e.name)).map((e) => e.name),
    gitDir: complete ? looksLikeGitDir(entries) : lstatGitDir(dir),
  };
}

/** Whether `entries` hold what git looks for in a git directory: `HEAD`, `objects/`, `refs/`. */
function looksLikeGitDir(entries: readonly Deno.DirEntry[]): boolean {
  const has = (name: string, dir: boolean) =>
    entries.some((e) => e.name === name && (dir ? e.isDirectory : e.isFile || e.isSymlink));
  return has("HEAD", false) && has("objects", true) && has("refs", true);
}

/** {@link looksLikeGitDir} for a directory not read whole: each of the three looked up. */
function lstatGitDir(dir: string): boolean {
  const kind = (name: string) => {
    try {
      return Deno.lstatSync(`${dir}/${name}`);
    } catch {
      return null;
    }
  };
  const head = kind("HEAD");
  return (head?.isFile === true || head?.isSymlink === true) &&
    kind("objects")?.isDirectory === true && kind("refs")?.isDirectory === true;
}
