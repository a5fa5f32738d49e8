/**
 * Reads, writes, closes, ioctls and polls of raw file descriptors through Deno FFI, on the C library of
 * the OS the kernel runs on (`c_library.ts`): the output pipes of a bash started by
 * `posix_spawn.ts` and a PTY's master (`pty/libc.ts`). All calls except {@link waitReadable} are
 * synchronous on the calling thread so `errno` can be read right after them.
 */
import { C_FACTS, cFacts, openCLibrary } from "./c_library.ts";

const C = cFacts(Deno.build.os) ?? C_FACTS.linux;
/** poll() events bit: readable (same value on Linux and macOS). */
export const POLLIN = 0x1;
/** poll() revents bit: the fd cannot be polled (same value on Linux and macOS). */
const POLLNVAL = 0x20;
/** Wait in ms instead, should the OS refuse to poll the fd. */
const POLL_FALLBACK_MS = 5;

/** errno: resource temporarily unavailable (nothing to read, or no room to write). */
export const EAGAIN = C.EAGAIN;
/** errno: I/O error (a PTY master whose slave fds are all closed). */
export const EIO = C.EIO;
/** errno: interrupted system call. */
export const EINTR = C.EINTR;

const symbols = {
  read: { parameters: ["i32", "buffer", "usize"], result: "i64" },
  write: { parameters: ["i32", "buffer", "usize"], result: "i64" },
  close: { parameters: ["i32"], result: "i32" },
  open: { parameters: ["buffer", "i32"], result: "i32" },
  readlink: { parameters: ["buffer", "buffer", "usize"], result: "i64" },
  ioctl: { parameters: ["i32", "u64"], result: "i32" },
  fcntl: { parameters: ["i32", "i32", "i32"], result: "i32" },
  poll: { parameters: ["buffer", C.nfds, "i32"], result: "i32", nonblocking: true },
  poll_now: { name: "poll", parameters: ["buffer", C.nfds, "i32"], result: "i32" },
  [C.errnoFn]: { parameters: [], result: "pointer" },
} as const satisfies Deno.ForeignLibraryInterface;

let lib: Deno.DynamicLibrary<typeof symbols> | null = null;

function libc(): Deno.DynamicLibrary<typeof symbols>["symbols"] {
  lib ??= Deno.dlopen(C.libc, symbols);
  return lib.symbols;
}

/** The calling thread's errno, right after a failed synchronous call. */
export function errno(): number {
  const get = libc()[C.errnoFn] as () => Deno.PointerValue;
  const p = get();
  return p === null ? 0 : new Deno.UnsafePointerView(p).getInt32();
}

/**
 * A getter of the C library opened with `symbols` at its first call (on Linux only, when
 * `linuxOnly`), null where it cannot be: {@link errno}'s library is loaded with it, since loading
 * that after a failed call could change errno.
 */
export function lazyCLibrary<S extends Deno.ForeignLibraryInterface>(
  symbols: S,
  linuxOnly: boolean,
): () => Deno.DynamicLibrary<S>["symbols"] | null {
  let lib: Deno.DynamicLibrary<S>["symbols"] | null | undefined;
  return () => {
    if (lib !== undefined) return lib;
    lib = linuxOnly && Deno.build.os !== "linux" ? null : openCLibrary(symbols)?.symbols ?? null;
    errno();
    return lib;
  };
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

/**
 * poll(2) of `count` pollfd entries in `pfds` on a worker thread (the event loop keeps running):
 * resolves to poll's result. Deno runs at most a few dozen such calls at once, so a caller must
 * not keep many waiting.
 */
export function pollFds(pfds: Uint8Array, count: number, timeoutMs: number): Promise<number> {
  const poll = libc().poll as unknown as (
    b: Uint8Array,
    n: number | bigint,
    t: number,
  ) => Promise<number>;
  return poll(pfds, C.nfds === "u64" ? BigInt(count) : count, timeoutMs);
}

/**
 * Waits on a worker thread until `fd` is readable, hung up, or `timeoutMs` passed; resolves to
 * whether it is ready. The event loop keeps running meanwhile.
 */
export async function waitReadable(fd: number, timeoutMs: number): Promise<boolean> {
  const pfd = new Uint8Array(8);
  const view = new DataView(pfd.buffer);
  view.setInt32(0, fd, true);
  view.setInt16(4, POLLIN, true);
  const ready = await pollFds(pfd, 1, timeoutMs) > 0;
  if (ready && (view.getInt16(6, true) & POLLNVAL) !== 0) {
    // Not seen on Linux; a refusing OS degrades to short sleeps instead of a busy loop.
    await new Promise((r) => setTimeout(r, POLL_FALLBACK_MS));
    return false;
  }
  return ready;
}

/**
 * The events of `events` that `fd` has now (poll(2) without waiting, on the calling thread), or
 * -1 when it cannot be polled.
 */
export function eventsNow(fd: number, events: number): number {
  const pfd = new Uint8Array(8);
  const view = new DataView(pfd.buffer);
  view.setInt32(0, fd, true);
  view.setInt16(4, events, true);
  const n = libc().poll_now(pfd, C.nfds === "u64" ? BigInt(1) : 1, 0);
  if (n < 0) return -1;
  const revents = view.getInt16(6, true);
  return (revents & POLLNVAL) !== 0 ? -1 : revents;
}

/** `s` as a NUL-terminated C string. */
export function cString(s: string): Uint8Array {
  return new TextEncoder().encode(`${s}\0`);
}

/** open(2) of `path` (text, or exact bytes) with `flags`: the fd, or `-errno` on failure. */
export function openFd(path: string | Uint8Array, flags: number): number {
  const name = typeof path === "string" ? cString(path) : new Uint8Array([...path, 0]);
  const fd = libc().open(name, flags);
  return fd < 0 ? -errno() : fd;
}

/**
 * Opens `path` read-only, non-blocking and close-on-exec (a FIFO opens at once, writer or not):
 * the fd, or `-errno` on failure.
 */
export function openReadNonBlocking(path: string | Uint8Array): number {
  return openFd(path, C.O_NONBLOCK | C.O_CLOEXEC);
}

/**
 * readlink(2) of `path`: the link's target as bytes (Deno's readLink throws on a target that is not
 * UTF-8, such as `/proc/self/fd/N` of a directory so named), or null on failure.
 */
export function readLinkBytes(path: string): Uint8Array | null {
  const buf = new Uint8Array(4097);
  const n = Number(libc().readlink(cString(path), buf, BigInt(buf.length)));
  return n < 0 || n >= buf.length ? null : buf.slice(0, n);
}

/** ioctl(2) of `fd` with a `request` that takes no argument: its result, or `-errno` on failure. */
export function ioctlFd(fd: number, request: number): number {
  const r = libc().ioctl(fd, BigInt(request));
  return r < 0 ? -errno() : r;
}

/** fcntl(2) commands and flag of the close-on-exec bit (the same on Linux and macOS). */
const F_GETFD = 1;
const F_SETFD = 2;
const FD_CLOEXEC = 1;

/** Marks `fd` close-on-exec, when it is open and lacks the mark. */
export function markCloseOnExec(fd: number): void {
  const flags = libc().fcntl(fd, F_GETFD, 0);
  if (flags >= 0 && (flags & FD_CLOEXEC) === 0) libc().fcntl(fd, F_SETFD, flags | FD_CLOEXEC);
}

/** Closes `fd`. */
export function closeFd(fd: number): void {
  libc().close(fd);
}
