/**
 * How much memory a sandbox's own file systems may hold. Its `/tmp` and `/dev/shm` are tmpfs,
 * which by default may each grow to half of the RAM, per sandbox, and what they hold the OOM killer
 * cannot reclaim: `yes > /tmp/x` pinned the host's memory until the sandbox ended. Bounded, a write
 * past the bound fails with ENOSPC, as on a full disk.
 */

/** Byte sizes of a sandbox's `/tmp`, `/dev/shm` and each of its tool caches (`view.ts`). */
export interface TmpfsBounds {
  tmp: number;
  shm: number;
  cache: number;
}

/**
 * The bounds on a host with `total` bytes of RAM: a quarter of it for `/tmp` (builds unpack and
 * compile there), an eighth for `/dev/shm` (POSIX shared memory: semaphores, browsers' buffers)
 * and a sixteenth for each of the two tool caches (`~/.cache`, `~/.npm`).
 */
export function tmpfsBounds(total: number = Deno.systemMemoryInfo().total): TmpfsBounds {
  return { tmp: Math.floor(total / 4), shm: Math.floor(total / 8), cache: Math.floor(total / 16) };
}
