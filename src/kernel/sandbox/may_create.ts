/**
 * access(2) through Deno FFI: whether this process may create an entry in a directory. A sandboxed
 * run has the kernel's uid, groups and no capabilities, so where the kernel may not create, it may
 * not either (P-SBX-6).
 */
import { openCLibrary } from "../bash/c_library.ts";
import { cString } from "../bash/fd_calls.ts";

const symbols = { access: { parameters: ["buffer", "i32"], result: "i32" } } as const;

/** access(2)'s W_OK | X_OK: write and search (the same values on Linux and macOS). */
const CREATE = 2 | 1;

let lib: Deno.DynamicLibrary<typeof symbols> | null | undefined;

function libc(): Deno.DynamicLibrary<typeof symbols> | null {
  if (lib === undefined) lib = openCLibrary(symbols);
  return lib;
}

/**
 * Whether this process may create an entry in directory `dir`: false when it may not (another
 * user's directory, a read-only file system) or `dir` is missing; true when it cannot tell.
 */
export function mayCreateIn(dir: string): boolean {
  const c = libc();
  return c === null || c.symbols.access(cString(dir), CREATE) === 0;
}
