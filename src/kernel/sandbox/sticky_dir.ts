/**
 * Makes a directory whose mode keeps its set-id and sticky bits in the one mkdir(2) that makes it.
 * Deno's mkdir drops those bits, and a chmod after it goes by name: a directory placeholder is
 * made where an agent's program in another sandbox may write (P-SBX-6), which can swap the fresh
 * directory for a link between the two calls, and the kernel's chmod then changed the mode of the
 * file that link names, outside every grant (P-SBX-3).
 */
import { cString, errno, lazyCLibrary } from "../bash/fd_calls.ts";

/** errno: the name is taken (Linux and macOS alike). */
const EEXIST = 17;

const symbols = {
  mkdir: { parameters: ["buffer", "u32"], result: "i32" },
} as const satisfies Deno.ForeignLibraryInterface;

/** The C library's mkdir, or null where it cannot be loaded. */
const libc = lazyCLibrary(symbols, false);

/**
 * Makes the directory `path` with `mode` less the process's umask, special bits included, by one
 * mkdir(2) (which never follows a link at `path`). Throws `Deno.errors.AlreadyExists` when the
 * name is taken, another error when it cannot be made, or when the C library cannot be loaded
 * (nothing is made then: no mode is ever set by name afterwards).
 */
export function mkdirWithMode(path: string, mode: number): void {
  const c = libc();
  if (c === null) throw new Error(`cannot make ${path}: no C library to call mkdir(2) with`);
  if (c.mkdir(cString(path), mode) === 0) return;
  const code = errno();
  if (code === EEXIST) throw new Deno.errors.AlreadyExists(`${path} exists`);
  throw new Error(`mkdir ${path}: errno ${code}`);
}
