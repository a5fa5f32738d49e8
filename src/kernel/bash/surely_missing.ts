import { C_FACTS } from "./c_library.ts";
import { closeFd, openFd } from "./fd_calls.ts";

/** open(2)'s O_PATH, the same on every Linux architecture: a handle on a file, not opened. */
const O_PATH = 0o10000000;

/** open(2)'s O_NOFOLLOW on Linux, which differs on arm64. */
const O_NOFOLLOW = Deno.build.arch === "aarch64" ? 0o100000 : 0o400000;

/**
 * Whether `path` cannot be stat'ed (missing, or a directory on the way is not searchable), known
 * without the exception a failed `Deno.statSync` throws: building that error costs ~10× the stat,
 * and some files looked at on every request are absent for most users (a policy file never
 * written, the global git files; issue 33). With `followLinks` false, as `Deno.lstatSync` sees
 * it: a symlink at `path` is there, even one leading nowhere. Linux only (an O_PATH open starts
 * no FIFO's wait); elsewhere false, leaving the caller to stat.
 */
export function surelyMissing(path: string, followLinks = true): boolean {
  if (Deno.build.os !== "linux") return false;
  const nofollow = followLinks ? 0 : O_NOFOLLOW;
  const fd = openFd(path, O_PATH | nofollow | C_FACTS.linux.O_CLOEXEC);
  if (fd < 0) return true;
  closeFd(fd);
  return false;
}
