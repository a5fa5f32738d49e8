/**
 * The free space the kernel leaves on its state directory's file system: output capture stops
 * storing a run's output before the disk is full (a background `yes` spools ~200 MiB/s here), so
 * the user's other programs never find it full because of shoal. The run then fails as on a full
 * disk, with an error naming the state directory (`state_dir_failure.ts`).
 */
import { statfsSync } from "node:fs";

const MiB = 1024 * 1024;

/** The most free space kept: 1 GiB, or a twentieth of a smaller file system. */
const FLOOR_MAX = 1024 * MiB;

/** Spooled bytes between two looks at the free space (a statfs costs ~12 µs here). */
export const FREE_CHECK_BYTES = MiB;

/** The free space kept on a file system of `size` bytes. */
export function freeFloor(size: number): number {
  return Math.min(FLOOR_MAX, Math.floor(size / 20));
}

/**
 * Why `bytes` more may not be written to the file system holding `dir` (it would leave less than
 * its {@link freeFloor} free), or null when they may. A file system that cannot be asked is let be.
 */
export function spaceShortage(dir: string, bytes: number): string | null {
  let free: number, floor: number;
  try {
    const fs = statfsSync(dir);
    free = fs.bavail * fs.bsize;
    floor = freeFloor(fs.blocks * fs.bsize);
  } catch {
    return null;
  }
  if (free - bytes >= floor) return null;
  const mib = (n: number) => `${(n / MiB).toFixed(1)} MiB`;
  return `its file system has ${mib(free)} free, and shoal leaves ${
    mib(floor)
  } of it to other programs: the rest of the output was not stored`;
}
