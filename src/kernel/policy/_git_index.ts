/**
 * The protected names (P-SBX-6) a git index tracks: git's checkout, reset, merge… rewrite them
 * from the repository's history, and the sandbox keeps them read-only, so such a command must ask
 * first instead of leaving the work tree half switched.
 */
import { readSmallBytes } from "../bash/small_file.ts";
import { utf8Decoder } from "../../protocol/utf8.ts";
import { present } from "./_git_repository.ts";
import { PROTECTED_DIRS, PROTECTED_FILES } from "../sandbox/protected_names.ts";

/** The largest index read (a checkout of about a million files). */
const INDEX_LIMIT = 128 * 1024 * 1024;

/** The most protected paths reported for one index. */
const REPORTED = 100;

/**
 * The protected path a tracked path falls on, relative to the work tree: the path itself for a
 * protected file, the directory for a file below a protected directory; null for neither.
 */
function protectedPart(path: string): string | null {
  const segments = path.split("/");
  for (let i = 0; i < segments.length; i++) {
    const last = i === segments.length - 1;
    if (last && PROTECTED_FILES.includes(segments[i])) return path;
    if (!last && PROTECTED_DIRS.includes(segments[i])) return segments.slice(0, i + 1).join("/");
  }
  return null;
}

/**
 * The protected paths (relative to the work tree) the index at `file` tracks; [] when there is
 * no index (a repository without commits), null when it cannot be read or is not understood.
 */
export function trackedProtected(file: string): string[] | null {
  const found = new Set<string>();
  const decoder = utf8Decoder();
  const read = readIndex(file, (_mode, name, start, end) => {
    const part = protectedPart(decoder.decode(name.subarray(start, end)));
    if (part !== null) found.add(part);
    return found.size < REPORTED;
  });
  return read ? [...found].sort() : null;
}

/** Indexes whose gitlinks are remembered, the most recently read last. */
const REMEMBERED_INDEXES = 16;
/**
 * An index changed this recently (its ctime, in ms) is read again every time: a change made
 * after a read in the same millisecond would leave ctime as it was.
 */
const SETTLED_MS = 1000;

/** The gitlinks found in indexes, by path, with the identity of the file they were read from. */
const gitlinksRead = new Map<string, { identity: string; links: string[] | null }>();

/**
 * The identity of the file at `path` (device, inode, size, mtime, ctime) when its last change is
 * at least {@link SETTLED_MS} old, else null. Nothing sets a ctime: any later change of the file
 * gives it another.
 */
function settledIdentity(path: string): string | null {
  try {
    const info = Deno.statSync(path);
    const ctime = info.ctime?.getTime();
    if (ctime === undefined || Date.now() - ctime < SETTLED_MS) return null;
    return `${info.dev}:${info.ino}:${info.size}:${info.mtime?.getTime()}:${ctime}`;
  } catch {
    return null;
  }
}

/**
 * The submodules (gitlinks, mode 160000) the index at `file` tracks, relative to the work tree:
 * git status and diff recurse into them. [] without an index, null when it is not understood.
 * Every git command's analysis asks, so the answer for an index unchanged since it was read is
 * remembered: reading a 100,000-file repository's 8 MB index took ~13 ms of each.
 */
export function trackedGitlinks(file: string): string[] | null {
  const identity = settledIdentity(file);
  const known = gitlinksRead.get(file);
  if (identity !== null && known?.identity === identity) return known.links;
  const links = readGitlinks(file);
  gitlinksRead.delete(file);
  if (identity !== null && identity === settledIdentity(file)) {
    gitlinksRead.set(file, { identity, links });
    if (gitlinksRead.size > REMEMBERED_INDEXES) {
      gitlinksRead.delete(gitlinksRead.keys().next().value!);
    }
  }
  return links;
}

/** {@link trackedGitlinks} read from the file. */
function readGitlinks(file: string): string[] | null {
  const found: string[] = [];
  const decoder = utf8Decoder();
  const read = readIndex(file, (mode, name, start, end) => {
    if ((mode & 0o170000) === 0o160000) found.push(decoder.decode(name.subarray(start, end)));
    return found.length < REPORTED;
  });
  return read ? found : null;
}

/** The flags' name length that means "this long or longer": the name then ends at its NUL. */
const LONG_NAME = 0xfff;

/**
 * Calls `visit` with each entry's mode and name (bytes `start` to `end` of `name`, valid until the
 * next call) of the index at `file` until it returns false; whether the index was read (none at
 * all is read, and empty). Nothing is made per entry, and a name's length comes from the entry's
 * flags where they hold it: finding and decoding each of an index's 100,000 names, where only a
 * gitlink's was wanted, took ~24 ms of every `git status` analysis in the kernel.
 */
function readIndex(
  file: string,
  visit: (mode: number, name: Uint8Array, start: number, end: number) => boolean,
): boolean {
  if (!present(file)) return true;
  const bytes = readSmallBytes(file, INDEX_LIMIT);
  if (bytes === null || bytes.length < 12) return false;
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (utf8Decoder().decode(bytes.subarray(0, 4)) !== "DIRC") return false;
  const version = view.getUint32(4);
  if (version < 2 || version > 4) return false;
  const count = view.getUint32(8);
  let offset = 12;
  let previous: Uint8Array = new Uint8Array(0);
  for (let n = 0; n < count; n++) {
    if (offset + 62 > bytes.length) return false;
    const mode = view.getUint32(offset + 24);
    const flags = view.getUint16(offset + 60);
    const extended = version >= 3 && (flags & 0x4000) !== 0;
    let at = offset + 62 + (extended ? 2 : 0);
    let name: Uint8Array | null = null;
    const start = at;
    let end: number;
    if (version === 4) {
      // the name is the previous one less N bytes, then this suffix (git's offset varint)
      let c = bytes[at++];
      let strip = c & 127;
      while (c & 128) {
        c = bytes[at++];
        strip = ((strip + 1) << 7) | (c & 127);
      }
      end = bytes.indexOf(0, at);
      if (end < 0 || strip > previous.length) return false;
      const kept = previous.length - strip;
      name = new Uint8Array(kept + end - at);
      name.set(previous.subarray(0, kept));
      name.set(bytes.subarray(at, end), kept);
      previous = name;
      offset = end + 1;
    } else {
      const length = flags & LONG_NAME;
      end = length < LONG_NAME ? start + length : bytes.indexOf(0, start + LONG_NAME);
      if (end < 0 || end >= bytes.length || bytes[end] !== 0) return false;
      offset += ((start - offset) + (end - start) + 8) & ~7;
    }
    const ok = name === null ? visit(mode, bytes, start, end) : visit(mode, name, 0, name.length);
    if (!ok) break;
  }
  return true;
}
