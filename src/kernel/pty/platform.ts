/**
 * Per-OS facts the PTY layer needs: open flags, ioctl numbers, errno values, the C library and its
 * errno accessor, and how variadic calls (`ioctl`) must be declared for the platform's calling convention.
 */
import { C_LIBRARY } from "../bash/c_library.ts";

/** Constants and FFI declarations for one OS/architecture. */
export interface PtyPlatform {
  /** Path Deno.dlopen loads the C library from (bash/c_library.ts). */
  libc: string;
  /** Name of the function returning a pointer to the calling thread's errno. */
  errnoFn: "__errno_location" | "__error";
  O_RDWR: number;
  O_NOCTTY: number;
  O_NONBLOCK: number;
  O_CLOEXEC: number;
  TIOCSWINSZ: bigint;
  TIOCGWINSZ: bigint;
  EAGAIN: number;
  EIO: number;
  EINTR: number;
  /** FFI type of `poll`'s `nfds_t` (unsigned long on glibc, unsigned int on Darwin). */
  nfds: "u64" | "u32";
  /**
   * Unused register-sized arguments put between `ioctl`'s request and its pointer, so the pointer lands
   * where a variadic argument is read. Apple arm64 passes variadic arguments on the stack, not in
   * registers: 6 padding arguments fill x2..x7 and push the 9th (the pointer) to the first stack slot.
   */
  ioctlPadding: number;
}

/** The PTY facts for `os` on `arch` (Deno.build values); throws for an OS without PTY support here. */
export function ptyPlatform(os: string, arch: string): PtyPlatform {
  if (os === "linux") {
    return {
      libc: C_LIBRARY.linux,
      errnoFn: "__errno_location",
      O_RDWR: 0o2,
      O_NOCTTY: 0o400,
      O_NONBLOCK: 0o4000,
      O_CLOEXEC: 0o2000000,
      TIOCSWINSZ: 0x5414n,
      TIOCGWINSZ: 0x5413n,
      EAGAIN: 11,
      EIO: 5,
      EINTR: 4,
      nfds: "u64",
      ioctlPadding: 0,
    };
  }
  if (os === "darwin") {
    return {
      libc: C_LIBRARY.darwin,
      errnoFn: "__error",
      O_RDWR: 0x2,
      O_NOCTTY: 0x20000,
      O_NONBLOCK: 0x4,
      O_CLOEXEC: 0x1000000,
      TIOCSWINSZ: 0x80087467n,
      TIOCGWINSZ: 0x40087468n,
      EAGAIN: 35,
      EIO: 5,
      EINTR: 4,
      nfds: "u32",
      ioctlPadding: arch === "aarch64" ? 6 : 0,
    };
  }
  throw new Error(`pseudo-terminals are not supported on ${os}`);
}
