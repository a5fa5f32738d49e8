/**
 * A serving kernel keeps its socket path (G-SOCK-3/4): a socket file removed while it serves (by
 * hand, or by a cleaner of temporary files: systemd-tmpfiles ages `/tmp`, macOS its `$TMPDIR`
 * after three days) left a kernel that held the lock and served nothing, so every facade's
 * autostarted kernel exited 3 and no client reached a kernel until that one was killed; with its
 * lock file removed too, the next kernel won a new lock and a second kernel served the same state
 * directory beside the first, whose sessions and tasks nobody could reach. The socket's directory
 * is watched, and at each change the path and its lock are taken back (`PreparedSocket.reclaim`).
 * On Linux the watch is an inotify instance of its own, read when the kernel's fd waiter finds it
 * readable: `Deno.watchFs` lost every event of a directory removed with its entries (`rm -rf`) in
 * most runs here, its filter asking after each event whether the path still exists.
 */
import { type PreparedSocket, StartupError } from "./socket_prep.ts";
import { C_FACTS, openCLibrary } from "../bash/c_library.ts";
import { cString, readFd } from "../bash/fd_calls.ts";
import { dropFd, fdWaiterAvailable, waitFd } from "../bash/fd_waiter.ts";
import { ENTRY_EVENTS, INOTIFY_SYMBOLS, ONLY_THIS_DIR } from "../bash/inotify.ts";

/** How often, and how far apart, a reclaim that failed for a moment is tried again (5 s in all). */
const RETRIES = 50;
const RETRY_MS = 100;
/** How often the path is looked at when its directory cannot be watched ({@link pollWatch}). */
const POLL_MS = 1000;

/** A started keeper: `stop` ends the watch and waits for a reclaim under way. */
export interface SocketKeeper {
  stop(): Promise<void>;
}

/** A watch of one directory's entries, calling back after changes until closed. */
interface DirWatch {
  close(): void;
}

/**
 * Calls `changed` after each change of the entries of `dir` or of `dir` itself, through an
 * inotify instance of its own; null where there is none (not Linux, no FFI, no fd waiter).
 * Throws when the watch cannot be placed.
 */
function inotifyWatch(dir: string, changed: () => void): DirWatch | null {
  if (Deno.build.os !== "linux" || !fdWaiterAvailable()) return null;
  const lib = openCLibrary(INOTIFY_SYMBOLS);
  if (lib === null) return null;
  const fd = lib.symbols.inotify_init1(C_FACTS.linux.O_NONBLOCK | C_FACTS.linux.O_CLOEXEC);
  if (fd < 0) {
    lib.close();
    return null;
  }
  if (lib.symbols.inotify_add_watch(fd, cString(dir), ENTRY_EVENTS | ONLY_THIS_DIR) < 0) {
    dropFd(fd);
    lib.close();
    throw new Error("inotify_add_watch failed");
  }
  let open = true;
  const events = new Uint8Array(4096);
  (async () => {
    while (open) {
      await waitFd(fd);
      if (!open) return;
      while (readFd(fd, events) > 0); // drained: one check covers them all
      changed();
    }
  })();
  return {
    close() {
      if (!open) return; // the fd's number may belong to another by now
      open = false;
      dropFd(fd);
      lib.close();
    },
  };
}

/** {@link inotifyWatch} through `Deno.watchFs`, elsewhere. */
function fsWatch(dir: string, changed: () => void): DirWatch {
  const watcher = Deno.watchFs(dir, { recursive: false });
  (async () => {
    for await (const _ of watcher) changed();
  })().catch(() => {});
  return { close: () => watcher.close() };
}

/**
 * Calls `changed` every {@link POLL_MS}: where no watch can be placed (the user's inotify
 * instances, 128 by default, used up by editors and file watchers), a kernel whose socket was
 * removed never took it back.
 */
function pollWatch(changed: () => void): DirWatch {
  const timer = setInterval(changed, POLL_MS);
  return { close: () => clearInterval(timer) };
}

/** The directory holding `path`, which is absolute or relative to the working directory. */
function directoryOf(path: string): string {
  const i = path.lastIndexOf("/");
  return i < 0 ? "." : i === 0 ? "/" : path.slice(0, i);
}

/**
 * Watches the directory of `path` and reclaims the socket after every change there: `serve`
 * gets each listener bound again, `log` says what happened. A kernel that cannot take the path
 * back (another kernel owns it now, or the path is refused) says so once and serves the
 * connections it has; any other failure (a cleaner's `rm -rf` removing the directory between the
 * reclaim's steps) is tried again for a few seconds before it counts as that.
 */
export function keepSocket(
  prepared: PreparedSocket,
  path: string,
  serve: (listener: Deno.Listener) => void,
  log: (line: string) => void,
): SocketKeeper {
  const dir = directoryOf(path);
  let watcher: DirWatch | null = null;
  let watched: number | null = null;
  let stopped = false;
  let running: Promise<void> | null = null;
  let again = false;
  let failures = 0;

  const watch = () => {
    watcher?.close();
    watcher = null;
    try {
      watched = Deno.statSync(dir).ino;
      watcher = inotifyWatch(dir, check) ?? fsWatch(dir, check);
    } catch (e) {
      log(
        `cannot watch ${dir} for the socket's removal: ${(e as Error).message}; looking at it ` +
          `every ${POLL_MS} ms instead`,
      );
      watcher = pollWatch(check);
    }
  };

  const reclaim = async () => {
    try {
      const listener = await prepared.reclaim();
      if (stopped) return;
      if (listener !== null) {
        serve(listener);
        log(`socket ${path} was removed: serving it again`);
      }
      const now = (await Deno.stat(dir).catch(() => null))?.ino ?? null;
      if (now !== watched) {
        // The old watch's unread events go with it, and what changed before the new watch was
        // placed is unseen: look once more (a `rm -rf` that removed the lock file and its
        // directory after this reclaim saw the lock kept left a socket served without a lock).
        watch();
        again = true;
      }
      failures = 0;
    } catch (e) {
      const why = e instanceof Error ? e.message : String(e);
      if (!(e instanceof StartupError) && ++failures < RETRIES) {
        if (failures === 1) log(`cannot take back socket ${path} (${why}): trying again`);
        await new Promise((done) => setTimeout(done, RETRY_MS));
        again = true;
        return;
      }
      log(`lost socket ${path} (${why}): serving only the connections open`);
      stopped = true;
      watcher?.close();
      watcher = null;
    }
  };

  const check = () => {
    if (stopped) return;
    if (running !== null) {
      again = true;
      return;
    }
    running = (async () => {
      do {
        again = false;
        await reclaim();
      } while (again && !stopped);
      running = null;
    })();
  };

  watch();
  return {
    async stop() {
      stopped = true;
      watcher?.close();
      await running;
    },
  };
}
