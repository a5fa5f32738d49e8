/**
 * The C library the kernel's FFI loads on each OS (`Deno.build.os` values), with the facts every
 * caller of it needs: glibc on Linux, libSystem under its install name on macOS. Used by
 * `mkfifo.ts`, `fd_calls.ts` and `posix_spawn.ts` here and by `pty/platform.ts`.
 */

/** One OS's C library: where it loads from, its errno accessor, the errno values the kernel tests. */
export interface CFacts {
  /** Path Deno.dlopen loads the C library from. */
  libc: string;
  /** Name of the function returning a pointer to the calling thread's errno. */
  errnoFn: "__errno_location" | "__error";
  EAGAIN: number;
  EIO: number;
  EINTR: number;
  /** FFI type of `poll`'s `nfds_t` (unsigned long on glibc, unsigned int on Darwin). */
  nfds: "u64" | "u32";
  /** open(2) flags. */
  O_NONBLOCK: number;
  O_CLOEXEC: number;
}

/** The C library facts by OS. */
export const C_FACTS = {
  linux: {
    libc: "libc.so.6",
    errnoFn: "__errno_location",
    EAGAIN: 11,
    EIO: 5,
    EINTR: 4,
    nfds: "u64",
    O_NONBLOCK: 0o4000,
    O_CLOEXEC: 0o2000000,
  },
  darwin: {
    libc: "/usr/lib/libSystem.B.dylib",
    errnoFn: "__error",
    EAGAIN: 35,
    EIO: 5,
    EINTR: 4,
    nfds: "u32",
    O_NONBLOCK: 0x4,
    O_CLOEXEC: 0x1000000,
  },
} as const satisfies Record<string, CFacts>;

/** The C library facts for `os`, or null for an OS the kernel has no FFI facts for. */
export function cFacts(os: string): CFacts | null {
  return Object.hasOwn(C_FACTS, os) ? C_FACTS[os as keyof typeof C_FACTS] : null;
}

/** The C library for `os`, or null for an OS the kernel has no FFI facts for. */
export function cLibrary(os: string): string | null {
  return cFacts(os)?.libc ?? null;
}

/** This OS's C library opened with `symbols` through Deno FFI, or null when it cannot be. */
export function openCLibrary<S extends Deno.ForeignLibraryInterface>(
  symbols: S,
): Deno.DynamicLibrary<S> | null {
  const path = cLibrary(Deno.build.os);
  try {
    return path === null ? null : Deno.dlopen(path, symbols);
  } catch {
    return null;
  }
}
