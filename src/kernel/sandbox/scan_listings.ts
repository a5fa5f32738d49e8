/**
 * The directory listings the protection scan (P-SBX-6, `protected_paths.ts`) reads, and when a
 * listing of the last scan still holds: an inotify watch placed before the read has seen no change
 * of it since ({@link DirChanges}), or, where none can be placed, its stamp is as then.
 */
import { PROTECTED_DIRS, PROTECTED_FILES } from "./protected_names.ts";
import { DirChanges } from "./dir_changes.ts";
import { eachEntry, entryName, isUtf8 } from "./dir_stream.ts";

/**
 * Most directories one scan of one root reads (outside `node_modules`, within its depth), and
 * most subdirectories of one directory it keeps: the listings kept for the next scan take some
 * 300 bytes a directory, and a first scan some 20 µs. A root with more is refused its runs
 * (`protected_paths.ts` `Protection.unscanned`): a directory not read might hold a protected name.
 */
export const SCAN_DIR_LIMIT = 100_000;

/** Directory levels below a write root searched for protected names that exist at exec start. */
export const SCAN_DEPTH = 5;

/**
 * Directories the scan does not enter: installed dependencies, whose nested editor and shell
 * files no tool of the human's loads, and which are most of a project's directories.
 */
const UNSCANNED = ["node_modules"];

/**
 * The first `limit` entries of `dir` and whether that was all of them, or null when it cannot
 * be read: a directory of millions (an agent's) is never read whole (Deno's `readDirSync`, cut
 * short, had still built every entry).
 */
export function someEntries(
  dir: string,
  limit: number,
): { entries: Deno.DirEntry[]; complete: boolean } | null {
  const entries: Deno.DirEntry[] = [];
  let complete = true;
  const read = eachEntry(dir, (bytes, kind) => {
    if (entries.length === limit) return complete = false;
    entries.push({
      name: entryName(bytes),
      isFile: kind === "file",
      isDirectory: kind === "dir",
      isSymlink: kind === "symlink",
    });
  });
  return read ? { entries, complete } : null;
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
  /** Its entries that are protected names or `.git`, whatever is lifted. */
  found: string[];
  /**
   * The paths of its subdirectories but `node_modules`, `.git` and protected names, which a scan
   * enters: kept whole, so that a scan of a listing reused builds and hashes no path anew.
   */
  subdirs: string[];
  /** Its subdirectories that are protected names: a scan enters those a policy lifts. */
  protectedSubdirs: string[];
  /** Whether it had more of them than {@link SCAN_DIR_LIMIT}, which are not kept. */
  more: boolean;
  /** Whether it was read as one of a scan's deepest directories: no subdirectory is kept. */
  deepest: boolean;
  /**
   * Whether a subdirectory a scan enters has a name that is not UTF-8 and holds a protected name
   * ({@link holdsProtected}): no path the kernel passes on (a lookup, a bind) can name it.
   */
  unnamed: boolean;
  /**
   * Whether it has a subdirectory whose name is not UTF-8: nothing in that one is watched, so the
   * listing is read again at every scan.
   */
  rawNamed: boolean;
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
 * before means another directory (an ancestor renamed away and made again). Of one of a scan's
 * `deepest` directories, whose subdirectories it does not enter, none is kept.
 */
export function readScanned(
  dir: string,
  last: ReadonlyMap<string, DirRead>,
  samePath: boolean,
  deepest: boolean,
): DirRead | null {
  const had = last.get(dir);
  const known = had?.deepest === deepest && !had.rawNamed ? had : undefined;
  const holds = () => known?.token != null && changes!.unchanged(dir, known.token);
  if (samePath && holds()) return known!;
  // before the read: a change after it is an event
  const token = changes?.watch(dir) ?? null;
  if (token !== null) return holds() ? known! : readListing(dir, null, token, deepest);
  let info: Deno.FileInfo;
  try {
    info = Deno.statSync(dir);
  } catch {
    return null;
  }
  const stamp = stampOf(info);
  if (known !== undefined && known.settled && stamp !== null && known.stamp === stamp) return known;
  return readListing(dir, info, null, deepest);
}

/**
 * The listing of `dir` read now, with the stamp of `info` (its stat before the read), or with the
 * `token` of its watch ({@link changes}) instead; its subdirectories unless `deepest`.
 */
function readListing(
  dir: string,
  info: Deno.FileInfo | null,
  token: number | null,
  deepest: boolean,
): DirRead | null {
  const stamp = info === null ? null : stampOf(info);
  const readAt = Date.now();
  // every entry is read, a buffer at a time, and only the names kept that a scan needs: a
  // directory of a million files (an agent's) holds nothing, and takes some 0.3 s to read
  const found: string[] = [];
  const subdirs: string[] = [];
  const protectedSubdirs: string[] = [];
  const git = { head: false, objects: false, refs: false };
  let more = false;
  let unnamed = false;
  let rawNamed = false;
  const read = eachEntry(dir, (bytes, kind) => {
    if (kind === "dir") {
      const name = entryName(bytes);
      if (protectedName(name)) {
        found.push(name);
        if (name !== ".git") protectedSubdirs.push(name);
        return;
      }
      if (name === "objects" || name === "refs") git[name] = true;
      if (deepest) return;
      if (!isUtf8(name, bytes)) {
        rawNamed = true;
        unnamed ||= holdsProtected(joined(encoder.encode(dir), bytes));
      } else if (subdirs.length === SCAN_DIR_LIMIT) more = true;
      else if (!UNSCANNED.includes(name)) subdirs.push(`${dir}/${name}`);
    } else if (bytes[0] === DOT && bytes.length <= LONGEST_NAME) {
      const name = entryName(bytes);
      if (protectedName(name)) found.push(name);
    } else if (kind !== "other" && bytes.length === 4 && entryName(bytes) === "HEAD") {
      git.head = true;
    }
  });
  if (!read) return null;
  return {
    stamp: stamp ?? "",
    settled: stamp !== null && info!.ctime!.getTime() < readAt - RACY_MS,
    token,
    found,
    subdirs,
    protectedSubdirs,
    more,
    deepest,
    unnamed,
    rawNamed,
    gitDir: git.head && git.objects && git.refs,
  };
}

/** Most directories looked through below one whose name is not UTF-8. */
const UNNAMED_DIR_LIMIT = 10_000;

const encoder = new TextEncoder();

/** The bytes of path `dir` joined with entry name `name`. */
function joined(dir: Uint8Array, name: Uint8Array): Uint8Array {
  const path = new Uint8Array(dir.length + 1 + name.length);
  path.set(dir);
  path[dir.length] = 0x2f;
  path.set(name, dir.length + 1);
  return path;
}

/**
 * Whether the directory at `path`, bytes that are not UTF-8 (which no path the kernel passes on,
 * a lookup or a bind, can name), holds within {@link SCAN_DEPTH} levels an entry of a protected
 * name or `.git`, or is a bare repository: the sandbox could keep none of it read-only. So does
 * one of more than {@link UNNAMED_DIR_LIMIT} directories (not looked through). Anything else in
 * it needs no protection, and a run goes on (a cwd of such a name works as on the host, P-SBX-4).
 */
function holdsProtected(path: Uint8Array): boolean {
  let level = [path];
  let seen = 0;
  for (let depth = 0; depth < SCAN_DEPTH && level.length > 0; depth++) {
    const next: Uint8Array[] = [];
    for (const dir of level) {
      const git = { head: false, objects: false, refs: false };
      let kept = false;
      const read = eachEntry(dir, (bytes, kind) => {
        const name = bytes.length <= LONGEST_NAME ? entryName(bytes) : "";
        if (protectedName(name)) return !(kept = true);
        if (name === "HEAD") git.head = true;
        if (kind !== "dir" && kind !== "unknown") return;
        if (name === "objects" || name === "refs") git[name] = true;
        if (!UNSCANNED.includes(name)) next.push(joined(dir, bytes));
        if (++seen > UNNAMED_DIR_LIMIT) return !(kept = true);
      });
      if (read && (kept || (git.head && git.objects && git.refs))) return true;
    }
    level = next;
  }
  return false;
}

/** The byte `.`, which every protected name and `.git` begin with. */
const DOT = 0x2e;

/** The names a scan keeps of a directory's entries: protected names and `.git`. */
const KEPT = [".git", ...PROTECTED_FILES, ...PROTECTED_DIRS];

/** The length of the longest of {@link KEPT}: a longer name is none of them. */
const LONGEST_NAME = Math.max(...KEPT.map((name) => name.length));

/** Whether `name` is a protected name or `.git`, whatever is lifted. */
function protectedName(name: string): boolean {
  return KEPT.includes(name);
}
