/**
 * A serving kernel keeps its socket path (G-SOCK-3/4): a socket file removed while it serves (by
 * hand, or by a cleaner of temporary files: systemd-tmpfiles ages `/tmp`, macOS its `$TMPDIR`
 * after three days) left a kernel that held the lock and served nothing, so every facade's
 * autostarted kernel exited 3 and no client reached a kernel until that one was killed; with its
 * lock file removed too, the next kernel won a new lock and a second kernel served the same state
 * directory beside the first, whose sessions and tasks nobody could reach. The socket's directory
 * is watched, and at each change the path and its lock are taken back (`PreparedSocket.reclaim`).
 */
import type { PreparedSocket } from "./socket_prep.ts";

/** A started keeper: `stop` ends the watch and waits for a reclaim under way. */
export interface SocketKeeper {
  stop(): Promise<void>;
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
 * connections it has.
 */
export function keepSocket(
  prepared: PreparedSocket,
  path: string,
  serve: (listener: Deno.Listener) => void,
  log: (line: string) => void,
): SocketKeeper {
  const dir = directoryOf(path);
  let watcher: Deno.FsWatcher | null = null;
  let watched: number | null = null;
  let stopped = false;
  let running: Promise<void> | null = null;
  let again = false;

  const watch = () => {
    watcher?.close();
    watcher = null;
    try {
      watched = Deno.statSync(dir).ino;
      const current = Deno.watchFs(dir, { recursive: false });
      watcher = current;
      (async () => {
        for await (const _ of current) check();
      })().catch(() => {});
    } catch (e) {
      log(`cannot watch ${dir} for the socket's removal: ${(e as Error).message}`);
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
      if (now !== watched) watch();
    } catch (e) {
      const why = e instanceof Error ? e.message : String(e);
      log(`lost socket ${path} (${why}): serving only the connections open`);
      stopped = true;
      watcher?.close();
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
