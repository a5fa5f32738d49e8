import { C_FACTS } from "./c_library.ts";
import { dirIdentity } from "./dir_identity.ts";
import { closeFd, openFd } from "./fd_calls.ts";
import { type ShellState, spawnDir } from "./shell_state.ts";

/** open(2)'s O_PATH, the same on every Linux architecture: a handle on a file, not opened. */
const O_PATH = 0o10000000;

/**
 * Calls `spawn` with the directory a child of `state` starts in: its spawn directory; where the
 * state names the directory that must be there (`cwdIdentity`, P-SBX-7), exactly that one. It is
 * opened (O_PATH), its identity checked, and the child enters it by /proc/self/fd/N (its copy of
 * the kernel's descriptor, open until it execs), so a swap of the path for a symlink after the
 * check leads nowhere else. Throws NotFound when the path no longer names that directory.
 */
export function inBoundDir<T>(state: ShellState, spawn: (dir: string) => T): T {
  const dir = spawnDir(state);
  if (state.cwdIdentity === undefined || Deno.build.os !== "linux") return spawn(dir);
  const fd = openFd(dir, O_PATH | C_FACTS.linux.O_CLOEXEC);
  if (fd < 0) throw new Deno.errors.NotFound(`the session's cwd ${dir} is gone`);
  try {
    const held = `/proc/self/fd/${fd}`;
    if (dirIdentity(held) !== state.cwdIdentity) {
      throw new Deno.errors.NotFound(`the session's cwd ${dir} no longer names its directory`);
    }
    return spawn(held);
  } finally {
    closeFd(fd);
  }
}
