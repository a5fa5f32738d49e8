/**
 * Puts a file made aside in place under a name that must still be free, in one step: readers of
 * that name find nothing or the whole file, never one being written, and what is there already
 * (made meanwhile by the user, a tool, another kernel) is never replaced, as `O_EXCL` keeps it.
 */
import { cString, errno, lazyCLibrary } from "../bash/fd_calls.ts";

/** renameat2(2): the current directory as the base of a relative path; the flag to fail on EEXIST. */
const AT_FDCWD = -100, RENAME_NOREPLACE = 1;
/** errno: the target exists; the file system or kernel does not know the flag (or the call). */
const EEXIST = 17, EINVAL = 22, ENOSYS = 38;

const symbols = {
  renameat2: { parameters: ["i32", "buffer", "i32", "buffer", "u32"], result: "i32" },
} as const satisfies Deno.ForeignLibraryInterface;

/** The C library's renameat2 on Linux, or null where there is none (glibc before 2.28 too). */
const libc = lazyCLibrary(symbols, true);

/**
 * Renames `from` to `to` (same file system) when nothing is at `to`; throws
 * `Deno.errors.AlreadyExists` when something is, and leaves `from` then. Where the file system
 * cannot rename so, `to` becomes a second name of `from` (a link, refused as well when taken) and
 * `from` is removed: never a partial file either.
 */
export function renameNoReplace(from: string, to: string): void {
  const c = libc();
  if (c !== null) {
    if (c.renameat2(AT_FDCWD, cString(from), AT_FDCWD, cString(to), RENAME_NOREPLACE) === 0) return;
    const code = errno();
    if (code === EEXIST) throw new Deno.errors.AlreadyExists(`${to} exists`);
    if (code !== EINVAL && code !== ENOSYS) throw new Error(`renameat2 ${to}: errno ${code}`);
  }
  Deno.linkSync(from, to);
  Deno.removeSync(from);
}
