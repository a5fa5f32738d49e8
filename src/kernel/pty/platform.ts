/**
 * Per-OS facts the PTY layer needs: open flags, ioctl numbers, errno values, the C library and its
 * errno accessor, and how variadic calls (`ioctl`) must be declared for the platform's calling convention.
 */
import { C_FACTS, type CFacts } from "../bash/c_library.ts";

/** Constants and FFI declarations for one OS/architecture (the C library's from bash/c_library.ts). */
export interface PtyPlatform extends CFacts {
  O_RDWR: number;
  O_NOCTTY: number;
  TIOCSWINSZ: bigint;
  TIOCGWINSZ: bigint;
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
      ...C_FACTS.linux,
      O_RDWR: 0o2,
      O_NOCTTY: 0o400,
      TIOCSWINSZ: 0x5414n,
      TIOCGWINSZ: 0x5413n,
      ioctlPadding: 0,
    };
  }
  if (os === "darwin") {
    return {
      ...C_FACTS.darwin,
      O_RDWR: 0x2,
      O_NOCTTY: 0x20000,
      TIOCSWINSZ: 0x80087467n,
      TIOCGWINSZ: 0x40087468n,
      ioctlPadding: arch === "aarch64" ? 6 : 0,
    };
  }
  throw new Error(`pseudo-terminals are not supported on ${os}`);
}
