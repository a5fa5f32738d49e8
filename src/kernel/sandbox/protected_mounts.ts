/**
 * A sandbox's mounts seen from the host: the check that a started bwrap put every protection of
 * its view in place (P-SBX-6; bwrap binds by path, so a parent that a concurrent run swapped for a
 * symlink between the view's scan and the sandbox's start would have put a protection elsewhere
 * and left the real path writable), and when they are gone with the sandbox.
 */

import { closeFd } from "../bash/fd_calls.ts";
import { procStat } from "../bash/proc_stat.ts";
import { anchorDir } from "./anchored_dir.ts";
import { mountsChanged, mountTable, openMountTable } from "./mount_table.ts";

/** How often, and how many times at most, an ending sandbox's init is looked at until it is gone. */
const END_POLL_MS = 10;
const END_TRIES = 200;

/** The live children of `pid`. */
export function childrenOf(pid: number): number[] {
  try {
    const text = Deno.readTextFileSync(`/proc/${pid}/task/${pid}/children`).trim();
    return text === "" ? [] : text.split(" ").map(Number);
  } catch {
    return [];
  }
}

/**
 * The host pid of the init of the sandbox run by the bwrap `bwrap` (its child, pid 1 inside),
 * once that sandbox's command has started. Throws when there is none.
 */
export function sandboxInit(bwrap: number): number {
  const init = childrenOf(bwrap)[0];
  if (!(init > 0)) throw new Error("no sandbox init under bwrap");
  return init;
}

/** What {@link checkProtection} finds in place: pins, protected paths and masks. */
type Checked = {
  pins: readonly string[];
  paths: readonly { path: string }[];
  masks?: readonly string[];
};

/** The device and inode of what `path` names: `lstat`, so a symlink is itself; null when none. */
function identity(path: string): string | null {
  try {
    const info = Deno.lstatSync(path);
    return info.isSymlink ? null : `${info.dev}:${info.ino}`;
  } catch {
    return null;
  }
}

/** The {@link identity} of the host's entry at `path` reached with no symlink on the way. */
function hostIdentity(path: string): string | null {
  const slash = path.lastIndexOf("/");
  let dir;
  try {
    dir = anchorDir(path.slice(0, slash) || "/");
  } catch {
    return null; // a symlink on the way now
  }
  try {
    return identity(dir.at(path.slice(slash + 1)));
  } finally {
    dir.close();
  }
}

/**
 * Throws unless every pin, protected path and mask of `protection` is a mount point of the
 * sandbox whose init is `init` (call it once the sandbox's command runs: its mounts are complete
 * then), and every pin and protected path shows the host's entry at that path. bwrap resolves a
 * bind's source when it starts and mounts it later: a directory an agent's program swapped for a
 * link to a directory of the human's and back meanwhile had that directory bound read-write at
 * the pin's place (P-SBX-3).
 */
export function checkProtection(init: number, protection: Checked): void {
  const bound = [...protection.pins, ...protection.paths.map((p) => p.path)];
  const paths = [...bound, ...protection.masks ?? []];
  if (paths.length === 0) return;
  const points = mountPoints(init);
  const missing = paths.find((path) => !points.has(path));
  if (missing !== undefined) throw new Error(`protected path not in place: ${missing}`);
  const other = bound.find((path) => {
    const host = hostIdentity(path);
    return host === null || identity(`/proc/${init}/root${path}`) !== host;
  });
  if (other !== undefined) throw new Error(`protected path shows another entry: ${other}`);
}

/**
 * Whether every pin and protected path of `protection` is still a mount point of the sandbox whose
 * init is `init`: one the host removed or renamed since is not (Linux detached it).
 */
export function protectionInPlace(init: number, protection: Checked): boolean {
  try {
    checkProtection(init, protection);
    return true;
  } catch {
    return false;
  }
}

/**
 * A sandbox's protections (P-SBX-6), watched through its open mount table: Linux flags an open
 * /proc/PID/mountinfo (POLLPRI) after a mount or unmount in its namespace since it was last
 * polled, so the table is read and checked again only after such a change. Make it before the
 * first check of the sandbox, so that no change after that check is missed.
 */
export class ProtectionWatch {
  #fd: number;
  #intact = true;

  constructor(
    private readonly init: number,
    private readonly protection: Checked,
  ) {
    this.#fd = openMountTable(init);
  }

  /** Whether every protection is still a mount point (once one is gone, it stays gone). */
  get intact(): boolean {
    if (!this.#intact) return false;
    if (this.#fd >= 0 && !mountsChanged(this.#fd)) return true;
    this.#intact = protectionInPlace(this.init, this.protection);
    return this.#intact;
  }

  /** Closes the mount table: call once the sandbox has ended (its init's pid may name another). */
  close(): void {
    if (this.#fd >= 0) closeFd(this.#fd);
    this.#fd = -1;
  }
}

/** The mount points of the mount namespace process `pid` is in. */
export function mountPoints(pid: number): Set<string> {
  return new Set(mountTable(pid).map((mount) => mount.point));
}

/** Whether process `pid` has exited (a zombie or gone). */
function exited(pid: number): boolean {
  const fields = procStat(pid);
  return fields === null || fields[0] === "Z";
}

/**
 * Resolves once the sandbox init `init` (a host pid, from {@link sandboxInit}) has exited, and so
 * every process of its PID namespace (an init's exit waits for them) and the sandbox's mounts with
 * them; or after {@link END_TRIES} looks. Once bwrap has exited its init is reparented, so the
 * kernel sees it as another's until then.
 */
export async function untilEnded(init: number): Promise<void> {
  for (let tries = 0; tries < END_TRIES && !exited(init); tries++) {
    await new Promise((resolve) => setTimeout(resolve, END_POLL_MS));
  }
}
