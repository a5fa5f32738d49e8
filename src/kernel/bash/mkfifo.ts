/** `mkfifo(3)` through Deno FFI, for the hand-over pipe of a warm shell. */
import { openCLibrary } from "./c_library.ts";
import { cString } from "./fd_calls.ts";

const symbols = { mkfifo: { parameters: ["buffer", "u32"], result: "i32" } } as const;

let lib: Deno.DynamicLibrary<typeof symbols> | null | undefined;

function libc(): Deno.DynamicLibrary<typeof symbols> | null {
  if (lib === undefined) lib = openCLibrary(symbols);
  return lib;
}

/** Creates a FIFO at `path` with `mode`; false when that is not possible on this host. */
export function mkfifo(path: string, mode: number): boolean {
  const c = libc();
  if (c === null) return false;
  return c.symbols.mkfifo(cString(path), mode) === 0;
}
