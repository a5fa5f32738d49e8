/**
 * Gives the C heap's free pages back to the system once the kernel falls idle (issue 33): glibc
 * keeps what Deno's Rust side freed (request buffers, spawn and pipe state, SQLite's pages) in its
 * arenas, 7-10 MiB of the kernel's RSS after a burst of execs, until `malloc_trim(3)` returns it.
 * The kernel runs it as idle work (`protocol/idle_work.ts`), after the V8 heap's compaction
 * (`protocol/heap_compaction.ts`), which frees C memory too. Only where glibc provides
 * `malloc_trim` (Linux); elsewhere nothing runs.
 */
import { cLibrary } from "../bash/c_library.ts";

const symbols = { malloc_trim: { parameters: ["usize"], result: "i32" } } as const;

/** `malloc_trim` of the C library, or null where there is none (not Linux, or not glibc). */
export function mallocTrim(): (() => void) | null {
  const path = Deno.build.os === "linux" ? cLibrary(Deno.build.os) : null;
  if (path === null) return null;
  try {
    const lib = Deno.dlopen(path, symbols);
    return () => lib.symbols.malloc_trim(0n);
  } catch {
    return null;
  }
}
