/**
 * The C library the kernel's FFI loads on each OS (`Deno.build.os` values): glibc on Linux,
 * libSystem under its install name on macOS. Used by `mkfifo.ts` here and by `pty/platform.ts`.
 */
export const C_LIBRARY = {
  linux: "libc.so.6",
  darwin: "/usr/lib/libSystem.B.dylib",
} as const;

/** The C library for `os`, or null for an OS the kernel has no FFI facts for. */
export function cLibrary(os: string): string | null {
  return Object.hasOwn(C_LIBRARY, os) ? C_LIBRARY[os as keyof typeof C_LIBRARY] : null;
}
