/**
 * A directory's entries read a buffer at a time (getdents64(2) through FFI on Linux) and handed
 * to the caller one by one, none kept: Deno's `readDirSync` builds every entry of a directory as
 * an object before the first is seen, some 200 bytes and 10 µs each, so a directory of a million
 * entries (an agent's) cost the protection scan (P-SBX-6) hundreds of MiB and seconds. Elsewhere
 * (macOS) it falls back to `readDirSync`.
 */
import { C_FACTS } from "../bash/c_library.ts";
import { closeFd, errno, lazyCLibrary, openFd } from "../bash/fd_calls.ts";

/**
 * The kind of an entry, as a scan needs it: `unknown` only in a directory named by bytes, on a
 * file system that gives no d_type.
 */
export type EntryKind = "dir" | "file" | "symlink" | "other" | "unknown";

const symbols = {
  getdents64: { parameters: ["i32", "buffer", "usize"], result: "i64" },
} as const satisfies Deno.ForeignLibraryInterface;

const calls = lazyCLibrary(symbols, true);

/** open(2)'s O_DIRECTORY: a path that is no directory (a FIFO swapped in) is not opened. */
const O_DIRECTORY = Deno.build.arch === "aarch64" ? 0o40000 : 0o200000;

/** getdents64's d_type values: DT_DIR, DT_REG, DT_LNK, DT_UNKNOWN (look the entry up). */
const DT_DIR = 4;
const DT_REG = 8;
const DT_LNK = 10;
const DT_UNKNOWN = 0;

/** Bytes read at once: some 2,000 entries of short names. */
const BUFFER_BYTES = 64 * 1024;
const buffer = new Uint8Array(BUFFER_BYTES);
const view = new DataView(buffer.buffer);
const decoder = new TextDecoder();
const encoder = new TextEncoder();

/** What {@link eachEntry} calls with each entry: returning false stops the reading. */
export type EntryVisit = (name: Uint8Array, kind: EntryKind) => boolean | void;

/**
 * Calls `visit` with each entry of `dir` (a path, or its bytes where they are not UTF-8) but `.`
 * and `..` until it returns false: the entry's
 * name's bytes (valid during the call only; decode what is kept) and its kind. False when `dir`
 * cannot be read (absent, no directory, unreadable), or stops being readable midway. `visit`
 * must not call it: the buffer is one.
 */
export function eachEntry(
  dir: string | Uint8Array,
  visit: EntryVisit,
): boolean {
  const libc = calls();
  // a path of bytes that are not UTF-8 only getdents64 can read
  if (libc === null) return typeof dir === "string" && eachEntryOfDeno(dir, visit);
  const fd = openFd(dir, O_DIRECTORY | C_FACTS.linux.O_CLOEXEC | C_FACTS.linux.O_NONBLOCK);
  if (fd < 0) return false;
  try {
    for (;;) {
      const n = Number(libc.getdents64(fd, buffer, BigInt(BUFFER_BYTES)));
      if (n < 0 && errno() === C_FACTS.linux.EINTR) continue;
      if (n <= 0) return n === 0;
      // struct linux_dirent64: d_ino u64, d_off s64, d_reclen u16, d_type u8, d_name (NUL-ended)
      for (let at = 0; at < n; at += view.getUint16(at + 16, true)) {
        const start = at + 19;
        let end = start;
        while (buffer[end] !== 0) end++;
        const name = buffer.subarray(start, end);
        if (isDotOrDotDot(name)) continue;
        const type = buffer[at + 18];
        const kind = type !== DT_UNKNOWN
          ? kindOf(type)
          : typeof dir === "string"
          ? lookedUp(`${dir}/${entryName(name)}`)
          : "unknown"; // no lstat takes bytes: opening it as a directory tells
        if (visit(name, kind) === false) return true;
      }
    }
  } finally {
    closeFd(fd);
  }
}

/** Whether `name` is `.` or `..`. */
function isDotOrDotDot(name: Uint8Array): boolean {
  return name[0] === 0x2e && (name.length === 1 || (name.length === 2 && name[1] === 0x2e));
}

/** The kind of a d_type other than DT_UNKNOWN. */
function kindOf(type: number): EntryKind {
  return type === DT_DIR ? "dir" : type === DT_REG ? "file" : type === DT_LNK ? "symlink" : "other";
}

/** The kind of the entry at `path`, by lstat (a file system that gives no d_type). */
function lookedUp(path: string): EntryKind {
  try {
    const info = Deno.lstatSync(path);
    return info.isDirectory ? "dir" : info.isFile ? "file" : info.isSymlink ? "symlink" : "other";
  } catch {
    return "other"; // gone since
  }
}

/** {@link eachEntry} through Deno's `readDirSync`, where no getdents64 can be called. */
function eachEntryOfDeno(dir: string, visit: EntryVisit): boolean {
  try {
    for (const e of Deno.readDirSync(dir)) {
      const kind = e.isDirectory ? "dir" : e.isFile ? "file" : e.isSymlink ? "symlink" : "other";
      if (visit(encoder.encode(e.name), kind) === false) return true;
    }
    return true;
  } catch {
    return false;
  }
}

/** `name`'s bytes as text (a byte that is not UTF-8 as U+FFFD). */
export function entryName(name: Uint8Array): string {
  return decoder.decode(name);
}

/** Whether `text`, {@link entryName} of `bytes`, is them: they are UTF-8. */
export function isUtf8(text: string, bytes: Uint8Array): boolean {
  if (!text.includes("\uFFFD")) return true;
  const again = encoder.encode(text);
  return again.length === bytes.length && again.every((b, i) => b === bytes[i]);
}
