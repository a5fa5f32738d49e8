/**
 * The few libc calls a pseudo-terminal master needs, through Deno FFI (Linux).
 *
 * All calls are synchronous on the calling thread so `errno` can be read right
 * after them; the master fd is non-blocking, so none of them waits.
 */

const O_RDWR = 0o2;
const O_NOCTTY = 0o400;
const O_NONBLOCK = 0o4000;
const O_CLOEXEC = 0o2000000;
const F_GETFL = 3;
const F_SETFL = 4;
const TIOCSWINSZ = 0x5414n;

/** errno: resource temporarily unavailable (nothing to read, or no room to write). */
export const EAGAIN = 11;
/** errno: I/O error (the slave side is closed). */
export const EIO = 5;
/** errno: interrupted system call. */
export const EINTR = 4;

const symbols = {
  posix_openpt: { parameters: ["i32"], result: "i32" },
  grantpt: { parameters: ["i32"], result: "i32" },
  unlockpt: { parameters: ["i32"], result: "i32" },
  ptsname_r: { parameters: ["i32", "buffer", "usize"], result: "i32" },
  ioctl: { parameters: ["i32", "u64", "buffer"], result: "i32" },
  fcntl: { parameters: ["i32", "i32", "i32"], result: "i32" },
  read: { parameters: ["i32", "buffer", "usize"], result: "i64" },
  write: { parameters: ["i32", "buffer", "usize"], result: "i64" },
  close: { parameters: ["i32"], result: "i32" },
  __errno_location: { parameters: [], result: "pointer" },
} as const;

let lib: Deno.DynamicLibrary<typeof symbols> | null = null;

function libc(): Deno.DynamicLibrary<typeof symbols>["symbols"] {
  lib ??= Deno.dlopen("libc.so.6", symbols);
  return lib.symbols;
}

function errno(): number {
  const p = libc().__errno_location();
  return p === null ? 0 : new Deno.UnsafePointerView(p).getInt32();
}

function check(result: number, what: string): number {
  if (result < 0) throw new Error(`${what} failed (errno ${errno()})`);
  return result;
}

/** A freshly allocated PTY master (non-blocking, close-on-exec) and its slave's path. */
export interface PtyMaster {
  fd: number;
  slavePath: string;
}

/** Opens a new PTY master, unlocks its slave and makes the master non-blocking. */
export function openPtyMaster(): PtyMaster {
  const c = libc();
  const fd = check(c.posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC), "posix_openpt");
  try {
    check(c.grantpt(fd), "grantpt");
    check(c.unlockpt(fd), "unlockpt");
    const name = new Uint8Array(128);
    const rc = c.ptsname_r(fd, name, BigInt(name.length));
    if (rc !== 0) throw new Error(`ptsname_r failed (errno ${rc})`);
    const flags = check(c.fcntl(fd, F_GETFL, 0), "fcntl(F_GETFL)");
    check(c.fcntl(fd, F_SETFL, flags | O_NONBLOCK), "fcntl(F_SETFL)");
    const slavePath = new TextDecoder().decode(name.subarray(0, name.indexOf(0)));
    return { fd, slavePath };
  } catch (e) {
    c.close(fd);
    throw e;
  }
}

/** Sets the window size of the terminal behind `fd` (the kernel sends SIGWINCH to its foreground group). */
export function setWindowSize(fd: number, cols: number, rows: number): void {
  const ws = new Uint16Array([rows, cols, 0, 0]);
  check(libc().ioctl(fd, TIOCSWINSZ, new Uint8Array(ws.buffer)), "ioctl(TIOCSWINSZ)");
}

/** Reads into `buf`: the byte count (0 at end of file), or `-errno` on failure. */
export function readFd(fd: number, buf: Uint8Array): number {
  const n = Number(libc().read(fd, buf, BigInt(buf.length)));
  return n < 0 ? -errno() : n;
}

/** Writes from `buf`: the byte count written, or `-errno` on failure. */
export function writeFd(fd: number, buf: Uint8Array): number {
  const n = Number(libc().write(fd, buf, BigInt(buf.length)));
  return n < 0 ? -errno() : n;
}

/** Closes `fd`. */
export function closeFd(fd: number): void {
  libc().close(fd);
}
