/** The mount table of a mount namespace, as Linux shows it in /proc/PID/mountinfo. */
import { eventsNow, openReadNonBlocking } from "../bash/fd_calls.ts";

/** One mount: where it is and the type of its file system. */
export interface Mount {
  point: string;
  type: string;
}

/**
 * The mounts of the namespace process `pid` is in, in the table's order (a later one at the same
 * point is on top): field 5 is the mount point, the field after the ` - ` separator the type.
 */
export function mountTable(pid: number | "self"): Mount[] {
  const unescape = (field: string) =>
    field.replace(/\\([0-7]{3})/g, (_, octal) => String.fromCharCode(parseInt(octal, 8)));
  const mounts: Mount[] = [];
  for (const line of Deno.readTextFileSync(`/proc/${pid}/mountinfo`).split("\n")) {
    const fields = line.split(" ");
    const separator = fields.indexOf("-", 6);
    if (fields.length < 5 || separator < 0) continue;
    mounts.push({ point: unescape(fields[4]), type: fields[separator + 1] ?? "" });
  }
  return mounts;
}

/** The mount `path` (an absolute real path) is on: the innermost, the top one of a stack. */
export function mountOf(mounts: readonly Mount[], path: string): Mount | undefined {
  let found: Mount | undefined;
  for (const mount of mounts) {
    const { point } = mount;
    const holds = point === "/" || path === point || path.startsWith(`${point}/`);
    if (holds && point.length >= (found?.point.length ?? 0)) found = mount;
  }
  return found;
}

/** The poll() event of an open mount table whose namespace's mounts changed (Linux). */
const POLLPRI = 0x2;

/**
 * The mount table of process `pid`'s namespace, open to be told of its changes
 * ({@link mountsChanged}), or -1 when it cannot be opened. Close it with `closeFd`.
 */
export function openMountTable(pid: number | "self"): number {
  return openReadNonBlocking(`/proc/${pid}/mountinfo`);
}

/**
 * Whether a mount or unmount happened in the namespace of the mount table open at `fd`
 * ({@link openMountTable}) since this was last asked: Linux flags it with POLLPRI.
 */
export function mountsChanged(fd: number): boolean {
  return eventsNow(fd, POLLPRI) !== 0;
}
