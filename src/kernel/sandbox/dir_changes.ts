/**
 * Which directories of the protection scan (P-SBX-6, `protected_paths.ts`) changed since their
 * listing was read, told by Linux inotify through FFI: the scan stat'ed every directory of a
 * project at every exec to tell (about 50 in this repository's tree, a third of the time a
 * sandboxed exec's view took, issue 34), where one read of the inotify queue now tells them all.
 * A watch is placed before the listing is read, so an entry made, removed or renamed after that
 * read is an event, and so is the directory's own rename or removal; a change of the kernel's
 * mount table (a mount over a directory, which no event tells) counts as a change of every one.
 * Only a file system every change of which passes through this machine's kernel tells them all: a
 * directory on one changed from elsewhere too (NFS, SMB, WSL's Windows drives, FUSE) takes no watch.
 * Where inotify is missing (macOS) or a watch cannot be placed (the user's watch limit), the scan
 * stats the directory as before.
 */
import { C_FACTS, openCLibrary } from "../bash/c_library.ts";
import { closeFd, cString, readFd } from "../bash/fd_calls.ts";
import {
  ENTRY_EVENTS,
  IGNORED,
  INOTIFY_SYMBOLS,
  ONLY_THIS_DIR,
  OVERFLOW,
} from "../bash/inotify.ts";
import { type Mount, mountOf, mountsChanged, mountTable, openMountTable } from "./mount_table.ts";

const symbols = INOTIFY_SYMBOLS;

/** The types of file system whose directories are watched: local disks' and memory's. */
const WATCHED_TYPES = new Set([
  "ext2",
  "ext3",
  "ext4",
  "xfs",
  "btrfs",
  "f2fs",
  "zfs",
  "bcachefs",
  "jfs",
  "reiserfs",
  "nilfs2",
  "tmpfs",
  "ramfs",
  "overlay",
]);

/**
 * Most watches held: a sixteenth of the per-user limit (`max_user_watches`), which the user's
 * editors and build tools share, at least 2,000 and at most 20,000; a project larger than this
 * is partly stat'ed instead. The scan reads every directory within its depth, so each one past
 * the limit costs a stat at every sandboxed exec (a project of 5,050 directories re-scanned
 * unchanged in 35-66 ms with 2,000 watches, 13-22 ms with 10,000, under load).
 */
export const WATCH_LIMIT = watchLimit();

/** {@link WATCH_LIMIT} of this host (2,000 where its limit cannot be read: 8,192 is common). */
function watchLimit(): number {
  let host = NaN;
  try {
    host = Number(Deno.readTextFileSync("/proc/sys/fs/inotify/max_user_watches").trim());
  } catch {
    // not Linux, or no /proc
  }
  return Number.isFinite(host) ? Math.min(20_000, Math.max(2000, Math.floor(host / 16))) : 2000;
}

/** Bytes read from the queue at once: `struct inotify_event` is 16 bytes and a name. */
const QUEUE_READ = 64 * 1024;

/**
 * The inotify instance of the kernel, with the directories it watches. A listing read right after
 * {@link watch} gave a token holds while {@link unchanged} says so for that token: several scans
 * (of roots that share directories) may hold listings of one directory read at different times.
 */
export class DirChanges {
  /** The directories each watch descriptor was placed for (one inode may have two paths). */
  #paths = new Map<number, Set<string>>();
  /** The watch descriptor of each directory. */
  #watches = new Map<string, number>();
  /** When each watched directory last changed (or took a new watch), as a {@link #seq}. */
  #changed = new Map<string, number>();
  /** When every directory last counted as changed (lost events, the mount table changed). */
  #all = 0;
  /** The kernel's mounts, read again after each change. */
  #mounts: Mount[];
  /** A counter that orders changes and tokens. */
  #seq = 0;
  #buffer = new Uint8Array(QUEUE_READ);

  private constructor(
    private readonly lib: Deno.DynamicLibrary<typeof symbols>,
    private readonly fd: number,
    /** The kernel's mount table, open ({@link openMountTable}). */
    private readonly mountsFd: number,
  ) {
    this.#mounts = mountTable("self");
  }

  /** A new instance, or null where inotify is not available (not Linux, no FFI, no fd left). */
  static open(): DirChanges | null {
    if (Deno.build.os !== "linux") return null;
    const lib = openCLibrary(symbols);
    if (lib === null) return null;
    const fd = lib.symbols.inotify_init1(C_FACTS.linux.O_NONBLOCK | C_FACTS.linux.O_CLOEXEC);
    const mountsFd = fd < 0 ? -1 : openMountTable("self");
    if (mountsFd < 0) {
      if (fd >= 0) closeFd(fd);
      lib.close();
      return null;
    }
    return new DirChanges(lib, fd, mountsFd);
  }

  /**
   * Takes in every change since the last call: a directory with an event, or every one after a
   * lost event or a change of the mount table, is no longer {@link unchanged}. Call it when a scan
   * starts.
   */
  collect(): void {
    if (mountsChanged(this.mountsFd)) {
      this.#all = ++this.#seq;
      this.#mounts = mountTable("self");
    }
    for (;;) {
      const n = readFd(this.fd, this.#buffer);
      if (n <= 0) return; // EAGAIN: nothing more
      const view = new DataView(this.#buffer.buffer, 0, n);
      for (let at = 0; at + 16 <= n; at += 16 + view.getUint32(at + 12, true)) {
        const wd = view.getInt32(at, true);
        const mask = view.getUint32(at + 4, true);
        const seq = ++this.#seq;
        if ((mask & OVERFLOW) !== 0) this.#all = seq;
        const paths = this.#paths.get(wd);
        if (paths === undefined) continue;
        for (const path of paths) {
          if ((mask & IGNORED) === 0) this.#changed.set(path, seq);
          else this.#unwatched(path);
        }
        if ((mask & IGNORED) !== 0) this.#paths.delete(wd);
      }
    }
  }

  /**
   * Whether the listing of `dir` read right after the {@link watch} that gave `token` still
   * holds: no entry of it was made, removed or renamed since, nor was it moved or removed itself.
   */
  unchanged(dir: string, token: number): boolean {
    return this.#watches.has(dir) && token > this.#all && token > (this.#changed.get(dir) ?? 0);
  }

  /**
   * Watches `dir` (the directory its path names now) from now on: call it right before its
   * listing is read. Its token for {@link unchanged}, or null when it cannot be watched (not a
   * directory, on a file system changed from elsewhere too, the watch limit reached).
   */
  watch(dir: string): number | null {
    const had = this.#watches.get(dir);
    if (had === undefined && this.#watches.size >= WATCH_LIMIT) return null;
    const type = mountOf(this.#mounts, dir)?.type ?? "";
    const wd = WATCHED_TYPES.has(type)
      ? this.lib.symbols.inotify_add_watch(this.fd, cString(dir), ENTRY_EVENTS | ONLY_THIS_DIR)
      : -1;
    if (had !== undefined && had !== wd) this.#drop(dir, had);
    if (wd < 0) return null;
    if (had !== wd) {
      // a new watch, or the path names another directory now: listings read before are stale
      this.#watches.set(dir, wd);
      this.#changed.set(dir, ++this.#seq);
      const paths = this.#paths.get(wd) ?? new Set<string>();
      paths.add(dir);
      this.#paths.set(wd, paths);
    }
    return ++this.#seq;
  }

  /** Stops watching each directory of `dirs` that `keep` does not hold. */
  forget(dirs: Iterable<string>, keep: (dir: string) => boolean): void {
    for (const dir of dirs) {
      const wd = this.#watches.get(dir);
      if (wd !== undefined && !keep(dir)) this.#drop(dir, wd);
    }
  }

  /** Drops `dir` from watch `wd`, and the watch itself once no other path has it. */
  #drop(dir: string, wd: number): void {
    this.#unwatched(dir);
    const paths = this.#paths.get(wd);
    paths?.delete(dir);
    if (paths !== undefined && paths.size > 0) return;
    this.#paths.delete(wd);
    this.lib.symbols.inotify_rm_watch(this.fd, wd);
  }

  /** Forgets the watch of `dir`: it is gone, or dropped. */
  #unwatched(dir: string): void {
    this.#watches.delete(dir);
    this.#changed.delete(dir);
  }
}
