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
  const read = readIndex(file, (name) => {
    const part = protectedPart(name);
    if (part !== null) found.add(part);
    return found.size < REPORTED;
  });
  return read ? [...found].sort() : null;
}

/**
 * The submodules (gitlinks, mode 160000) the index at `file` tracks, relative to the work tree:
 * git status and diff recurse into them. [] without an index, null when it is not understood.
 */
export function trackedGitlinks(file: string): string[] | null {
  const found: string[] = [];
  const read = readIndex(file, (name, mode) => {
    if ((mode & 0o170000) === 0o160000) found.push(name);
    return found.length < REPORTED;
  });
  return read ? found : null;
}

/**
 * Calls `visit` with each entry's name and mode of the index at `file` until it returns false;
 * whether the index was read (none at all is read, and empty).
 */
function readIndex(file: string, visit: (name: string, mode: number) => boolean): boolean {
  if (!present(file)) return true;
  const bytes = readSmallBytes(file, INDEX_LIMIT);
  if (bytes === null || bytes.length < 12) return false;
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const decoder = utf8Decoder();
  if (decoder.decode(bytes.subarray(0, 4)) !== "DIRC") return false;
  const version = view.getUint32(4);
  if (version < 2 || version > 4) return false;
  const count = view.getUint32(8);
  let offset = 12;
  let previous: Uint8Array = new Uint8Array(0);
  for (let n = 0; n < count; n++) {
    if (offset + 62 > bytes.length) return false;
    const mode = view.getUint32(offset + 24);
    const extended = version >= 3 && (view.getUint16(offset + 60) & 0x4000) !== 0;
    let at = offset + 62 + (extended ? 2 : 0);
    let name: Uint8Array;
    if (version === 4) {
      // the name is the previous one less N bytes, then this suffix (git's offset varint)
      let c = bytes[at++];
      let strip = c & 127;
      while (c & 128) {
        c = bytes[at++];
        strip = ((strip + 1) << 7) | (c & 127);
      }
      const end = bytes.indexOf(0, at);
      if (end < 0 || strip > previous.length) return false;
      const kept = previous.length - strip;
      name = new Uint8Array(kept + end - at);
      name.set(previous.subarray(0, kept));
      name.set(bytes.subarray(at, end), kept);
      offset = end + 1;
    } else {
      const end = bytes.indexOf(0, at);
      if (end < 0) return false;
      name = bytes.subarray(at, end);
      offset += ((at - offset) + name.length + 8) & ~7;
    }
    previous = name;
    if (!visit(decoder.decode(name), mode)) break;
  }
  return true;
}
