/**
 * Gives the C heap's free pages back to the system once the kernel falls idle (issue 33): glibc
 * keeps what Deno's Rust side freed (request buffers, spawn and pipe state, SQLite's pages) in its
 * arenas, 7-10 MiB of the kernel's RSS after a burst of execs, until `malloc_trim(3)` returns it.
 * A trim runs once after each burst: on the first tick of {@link IDLE_TRIM_MS} that saw no request
 * since the previous one. Only where glibc provides `malloc_trim` (Linux); elsewhere nothing runs.
 */
import { cLibrary } from "../bash/c_library.ts";

/** The period of the idle check, in ms: a trim follows a burst's last request by 2-4 s. */
export const IDLE_TRIM_MS = 2000;

const symbols = { malloc_trim: { parameters: ["usize"], result: "i32" } } as const;

let requests = 0;

/** Counts one request: the kernel is not idle. */
export function noteRequest(): void {
  requests++;
}

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

/**
 * Starts the idle check: `trim` runs on the first tick of every `periodMs` that saw no request
 * since the tick before, once per burst of requests. Never keeps the process alive; returns the
 * function that stops it.
 */
export function startIdleTrim(trim: () => void, periodMs = IDLE_TRIM_MS): () => void {
  let seen = requests;
  let trimmed = true;
  const timer = setInterval(() => {
    if (requests !== seen) {
      seen = requests;
      trimmed = false;
    } else if (!trimmed) {
      trim();
      trimmed = true;
    }
  }, periodMs);
  Deno.unrefTimer(timer);
  return () => clearInterval(timer);
}
