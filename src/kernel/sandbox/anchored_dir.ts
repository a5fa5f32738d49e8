/**
 * A directory held open by a path of no symlinks, for the kernel's own writes below a write root
 * (placeholders, P-SBX-6): an agent's program in another sandbox may write there at that moment,
 * and swap a directory of the path for a link between the kernel's scan and its mkdir, which then
 * made the entry in whatever directory of the human's the link named (P-SBX-3).
 */
import { closeFd, cString, errno, lazyCLibrary } from "../bash/fd_calls.ts";

/** openat2(2)'s number (the same on every Linux architecture), AT_FDCWD. */
const OPENAT2 = 437, AT_FDCWD = -100;
/** O_PATH | O_CLOEXEC (the same on x86_64 and aarch64); RESOLVE_NO_SYMLINKS. */
const O_PATH_CLOEXEC = 0o10000000 | 0o2000000, RESOLVE_NO_SYMLINKS = 0x04;
/** errno: a symlink on the path; no openat2 (Linux before 5.6, or a filter refusing it). */
const ELOOP = 40, ENOSYS = 38, EPERM = 1;

const symbols = {
  syscall: { parameters: ["i64", "i64", "buffer", "buffer", "i64"], result: "i64" },
} as const satisfies Deno.ForeignLibraryInterface;

/** The C library's syscall on Linux, or null where there is none. */
const libc = lazyCLibrary(symbols, true);

/** A directory reached without a symlink: `at(name)` names an entry in exactly that directory. */
export interface AnchoredDir {
  at(name: string): string;
  close(): void;
}

/**
 * Holds the directory `dir` (absolute, a real path) open when no component of it is a symlink,
 * and names its entries through `/proc/self/fd`, so that what a later rename or link puts on the
 * path cannot redirect them; throws when a component is a symlink now (or `dir` is missing).
 * Where openat2(2) or `/proc` are missing (macOS, Linux before 5.6) the path itself is used.
 */
export function anchorDir(dir: string): AnchoredDir {
  const c = libc();
  const byPath = { at: (name: string) => `${dir}/${name}`, close: () => {} };
  if (c === null) return byPath;
  // struct open_how: flags, mode, resolve (u64 each)
  const how = new BigUint64Array([BigInt(O_PATH_CLOEXEC), 0n, BigInt(RESOLVE_NO_SYMLINKS)]);
  const fd = Number(
    c.syscall(BigInt(OPENAT2), BigInt(AT_FDCWD), cString(dir), new Uint8Array(how.buffer), 24n),
  );
  if (fd < 0) {
    const code = errno();
    if (code === ENOSYS || code === EPERM) return byPath;
    if (code === ELOOP) throw new Error(`${dir} is reached through a symlink now`);
    throw new Error(`cannot open ${dir}: errno ${code}`);
  }
  return { at: (name) => `/proc/self/fd/${fd}/${name}`, close: () => closeFd(fd) };
}
