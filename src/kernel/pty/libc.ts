/**
 * The few C library calls a pseudo-terminal needs beyond reads, writes and polls of its master
 * (`bash/fd_calls.ts`), through Deno FFI, with the constants of the OS it runs on (Linux and macOS,
 * see platform.ts). All are synchronous on the calling thread so `errno` can be read right after
 * them; the master fd is non-blocking, so none of them waits.
 */

import { closeFd, errno, openFd } from "../bash/fd_calls.ts";
import { ptyPlatform } from "./platform.ts";

export { closeFd, EAGAIN, EINTR, EIO, readFd, waitReadable, writeFd } from "../bash/fd_calls.ts";

const P = ptyPlatform(Deno.build.os, Deno.build.arch);

const symbols = {
  grantpt: { parameters: ["i32"], result: "i32" },
  unlockpt: { parameters: ["i32"], result: "i32" },
  ptsname_r: { parameters: ["i32", "buffer", "usize"], result: "i32" },
  // Declared with the padding the platform's variadic convention needs (see PtyPlatform.ioctlPadding).
  ioctl: {
    parameters: ["i32", "u64", ...Array<"u64">(P.ioctlPadding).fill("u64"), "buffer"],
    result: "i32",
  },
} as const satisfies Deno.ForeignLibraryInterface;

let lib: Deno.DynamicLibrary<typeof symbols> | null = null;

function libc(): Deno.DynamicLibrary<typeof symbols>["symbols"] {
  lib ??= Deno.dlopen(P.libc, symbols);
  return lib.symbols;
}
function check(result: number, what: string): number {
  if (result < 0) throw new Error(`${what} failed (errno ${errno()})`);
  return result;
}

/** The fd `openFd` gave for `path`; throws for its `-errno`. */
function opened(fd: number, path: string): number {
  if (fd < 0) throw new Error(`open(${path}) failed (errno ${-fd})`);
  return fd;
}

function ioctl(fd: number, request: bigint, arg: Uint8Array): number {
  const call = libc().ioctl as unknown as (...args: unknown[]) => number;
  return call(fd, request, ...Array(P.ioctlPadding).fill(0n), arg);
}

/** A fresh PTY: the master (non-blocking) and an open slave fd that keeps the slave's settings alive. */
export interface PtyPair {
  master: number;
  slave: number;
  slavePath: string;
}

/**
 * Opens a PTY master with the OS's flags, unlocks its slave and opens the slave (without making it
 * our controlling terminal). Holding the slave open lets the window size be set before the child
 * starts: macOS refuses master ioctls until the slave is open and clears the size on its first open.
 */
export function openPty(): PtyPair {
  const c = libc();
  const flags = P.O_RDWR | P.O_NOCTTY | P.O_CLOEXEC;
  const master = opened(openFd("/dev/ptmx", flags | P.O_NONBLOCK), "/dev/ptmx");
  try {
    check(c.grantpt(master), "grantpt");
    check(c.unlockpt(master), "unlockpt");
    const name = new Uint8Array(128);
    if (c.ptsname_r(master, name, BigInt(name.length)) !== 0) {
      throw new Error(`ptsname_r failed (errno ${errno()})`);
    }
    const slavePath = new TextDecoder().decode(name.subarray(0, name.indexOf(0)));
    const slave = opened(openFd(slavePath, flags), slavePath);
    return { master, slave, slavePath };
  } catch (e) {
    closeFd(master);
    throw e;
  }
}

/** The window size of the terminal behind `fd` as [cols, rows]. */
export function windowSize(fd: number): [number, number] {
  const ws = new Uint16Array(4);
  check(ioctl(fd, P.TIOCGWINSZ, new Uint8Array(ws.buffer)), "ioctl(TIOCGWINSZ)");
  return [ws[1], ws[0]];
}

/**
 * Sets the window size of the terminal behind `fd` (the OS sends SIGWINCH to its foreground group)
 * and reads it back, so a call that passed its argument wrongly fails instead of passing silently.
 */
export function setWindowSize(fd: number, cols: number, rows: number): void {
  const ws = new Uint16Array([rows, cols, 0, 0]);
  check(ioctl(fd, P.TIOCSWINSZ, new Uint8Array(ws.buffer)), "ioctl(TIOCSWINSZ)");
  const [gotCols, gotRows] = windowSize(fd);
  if (gotCols !== cols || gotRows !== rows) {
    throw new Error(`window size reads back as ${gotCols}x${gotRows}, not ${cols}x${rows}`);
  }
}
