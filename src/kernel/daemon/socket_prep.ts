import type { SocketChoice } from "../../protocol/socket_path.ts";
import { checkedPaths, checkTrustedPath, UntrustedPathError } from "../../protocol/trusted_path.ts";

/** A startup failure with the kernel's exit status (K-CLI-1: 1 fatal, 3 another kernel owns the socket). */
export class StartupError extends Error {
  constructor(readonly status: number, message: string) {
    super(message);
  }
}

/**
 * A bound socket with its lock, ready to accept (G-SOCK-7). The listener is never closed: Deno
 * unlinks a closed listener's path by name, whatever sits there by then, and G-SOCK-8 allows
 * removing the path only while it is still the socket bound. The process leaves through
 * `Deno.exit`, which drops no resources.
 */
export interface PreparedSocket {
  listener: Deno.Listener;
  /**
   * Takes the socket path back when it or its lock file is no longer this kernel's (removed by
   * hand or by a cleaner of temporary files): the lock made and held again, the path bound again.
   * Returns the new listener, or null when the socket is still the one bound. Throws
   * {@link StartupError} when the path is refused now or another kernel owns it.
   */
  reclaim(): Promise<Deno.Listener | null>;
  /** Unlinks the socket if it is still the one bound, and releases the lock (G-SOCK-8). */
  release(): void;
}

async function canConnect(path: string): Promise<boolean> {
  try {
    (await Deno.connect({ transport: "unix", path })).close();
    return true;
  } catch {
    return false;
  }
}

/** The directory holding `path`; a relative path's is below the working directory. */
function parentOf(path: string): string {
  const absolute = path.startsWith("/") ? path : `${Deno.cwd()}/${path}`;
  const i = absolute.lastIndexOf("/");
  return i <= 0 ? "/" : absolute.slice(0, i);
}

/**
 * Refuses a symlink among the existing directories of `parent` below `root` (G-SOCK-10) before
 * step 1 of G-SOCK-3 creates or chmods anything: through one, `mkdir` made directories and
 * `chmod` changed the mode where the link pointed, and only the check after them refused.
 */
async function refuseSymlinks(parent: string, root: string): Promise<void> {
  for (const component of checkedPaths(parent, root)) {
    const info = await Deno.lstat(component).catch(() => null);
    if (info === null) return;
    if (info.isSymlink) {
      throw new StartupError(
        1,
        `untrusted socket path: ${component} is a symlink (owner uid ${info.uid ?? -1})`,
      );
    }
  }
}

/** Steps 1 and 2 of G-SOCK-3 and the trusted path (G-SOCK-10) for the socket `choice` names. */
async function prepareParent(choice: SocketChoice, uid: number): Promise<void> {
  const path = choice.path;
  const parent = parentOf(path);
  await refuseSymlinks(parent, choice.root);
  const found = await Deno.lstat(parent).catch(() => null);
  const existed = found !== null;
  if (found === null) await Deno.mkdir(parent, { recursive: true, mode: 0o700 });
  else if (!found.isDirectory) {
    // refused before the chmod below: it changed the file's mode (/dev/null's, for root)
    throw new StartupError(1, `socket directory ${parent} is not a directory`);
  }
  const info = await Deno.stat(parent);
  if (info.uid !== uid) {
    if (!choice.explicit) {
      throw new StartupError(1, `socket directory ${parent} is owned by uid ${info.uid}`);
    }
    console.error(`shoal-kernel: warning: socket directory ${parent} is owned by uid ${info.uid}`);
  } else if (existed && info.mode !== null && (info.mode & 0o077) !== 0) {
    await Deno.chmod(parent, 0o700);
  }
  try {
    checkTrustedPath(path, choice.root, uid);
  } catch (e) {
    if (e instanceof UntrustedPathError) throw new StartupError(1, e.message);
    throw e;
  }
}

/** Step 3 of G-SOCK-3: `<path>.lock`, opened (0600 when created) and locked, or exit status 3. */
async function takeLock(path: string): Promise<Deno.FsFile> {
  const lock = await Deno.open(`${path}.lock`, {
    create: true,
    read: true,
    write: true,
    mode: 0o600,
  });
  if (!(await lock.tryLock(true))) {
    lock.close();
    throw new StartupError(3, `another kernel owns ${path}`);
  }
  return lock;
}

/** Step 4 of G-SOCK-3 and the bind of G-SOCK-7, under the lock: the listener and the inode bound. */
async function bindPath(
  path: string,
  uid: number,
): Promise<{ listener: Deno.Listener; ino: number | null }> {
  const existing = await Deno.lstat(path).catch(() => null);
  if (existing) {
    if (!existing.isSocket) {
      throw new StartupError(1, `refusing to replace non-socket path ${path}`);
    }
    if (await canConnect(path)) throw new StartupError(3, `another kernel owns ${path}`);
    if (existing.uid !== uid) {
      throw new StartupError(1, `refusing to replace socket ${path} owned by uid ${existing.uid}`);
    }
    await Deno.remove(path);
  }
  const listener = Deno.listen({ transport: "unix", path });
  await Deno.chmod(path, 0o600);
  return { listener, ino: (await Deno.lstat(path)).ino };
}

/**
 * Prepares and binds the socket exactly as G-SOCK-3..7 order it, refusing an untrusted path
 * (G-SOCK-10).
 */
export async function prepareSocket(choice: SocketChoice, uid: number): Promise<PreparedSocket> {
  const path = choice.path;
  await prepareParent(choice, uid);
  let lock = await takeLock(path);
  let bound;
  try {
    bound = await bindPath(path, uid);
  } catch (e) {
    lock.close();
    throw e;
  }
  let boundIno = bound.ino;
  return {
    listener: bound.listener,
    async reclaim() {
      const held = (await lock.stat()).ino;
      const lockNow = await Deno.lstat(`${path}.lock`).catch(() => null);
      const socketNow = await Deno.lstat(path).catch(() => null);
      const lockKept = lockNow !== null && lockNow.ino === held;
      const socketKept = socketNow !== null && socketNow.ino === boundIno;
      if (lockKept && socketKept) return null;
      await prepareParent(choice, uid);
      if (!lockKept) {
        const fresh = await takeLock(path);
        lock.close();
        lock = fresh;
      }
      if (socketKept) return null;
      const again = await bindPath(path, uid);
      boundIno = again.ino;
      return again.listener;
    },
    release() {
      try {
        if (Deno.lstatSync(path).ino === boundIno) Deno.removeSync(path);
      } catch {
        // already gone
      }
      lock.close();
    },
  };
}
