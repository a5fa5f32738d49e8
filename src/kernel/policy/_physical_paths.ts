/**
 * Physical path resolution at analysis time (issue 14): the existing prefix of a path is resolved
 * through its symbolic links, so `ALLOWED/lnk/a` is judged where it lands. The rest, which does
 * not exist yet, is kept lexically.
 */
import { normalizePath } from "../bash/lexical_path.ts";

/** Symbolic links followed before giving up, as the kernel's ELOOP limit. */
const MAX_LINKS = 40;

/** Directory entries read to look for links a glob may match. */
const MAX_GLOB_ENTRIES = 10_000;

/**
 * The physical form of the absolute path `path` (`.`/`..` not yet removed): each existing prefix
 * resolved through links, `..` applied to the resolved prefix. `followLast` false keeps a final
 * link itself (what `rm` and `mv` act on). Null when links loop, or lead through a link of /proc
 * (`/dev/stdout`, `/dev/fd/3`, a link to `/proc/self/cwd`), which names another file in each
 * process.
 */
export function physicalPath(path: string, followLast = true): string | null {
  const pending = path.split("/").filter((segment) => segment !== "" && segment !== ".");
  const keepLast = !followLast && !path.endsWith("/");
  let resolved: string[] = [];
  let links = 0;
  let exists = true;
  while (pending.length > 0) {
    const segment = pending.shift()!;
    if (segment === "..") {
      resolved.pop();
      continue;
    }
    resolved.push(segment);
    if (!exists || (keepLast && pending.length === 0)) continue;
    let info: Deno.FileInfo;
    try {
      info = Deno.lstatSync(`/${resolved.join("/")}`);
    } catch {
      exists = false;
      continue;
    }
    if (!info.isSymlink) continue;
    // /proc/self, /proc/PID/cwd, fd/N…: what they lead to is the analyzing process's, not the run's
    if (resolved[0] === "proc" || ++links > MAX_LINKS) return null;
    let target: string;
    try {
      target = Deno.readLinkSync(`/${resolved.join("/")}`);
    } catch {
      return null;
    }
    resolved.pop();
    if (target.startsWith("/")) resolved = [];
    pending.unshift(...target.split("/").filter((s) => s !== "" && s !== "."));
  }
  return normalizePath(`/${resolved.join("/")}`);
}

/** Whether `path` is an existing regular file with more than one hard link. */
export function hasHardLinks(path: string): boolean {
  try {
    const info = Deno.lstatSync(path);
    return info.isFile && (info.nlink ?? 1) > 1;
  } catch {
    return false;
  }
}

/**
 * Whether a glob segment of `path` may match a symbolic link: the directory it applies to holds
 * one (or cannot be read through). `lastFollowed` false ignores a glob in the last segment.
 */
export function globMayMatchLink(path: string, lastFollowed: boolean): boolean {
  const segments = path.split("/").filter((segment) => segment !== "");
  const last = lastFollowed ? segments.length : segments.length - 1;
  for (let i = 0; i < last; i++) {
    if (!isGlob(segments[i])) continue;
    const dir = `/${segments.slice(0, i).join("/")}`;
    const below = segments.slice(i + 1, last);
    try {
      let count = 0;
      for (const entry of Deno.readDirSync(dir)) {
        if (entry.isSymlink || ++count > MAX_GLOB_ENTRIES) return true;
        // `*/x/a` reaches through a link x inside any directory the glob matches
        if (entry.isDirectory && below.length > 0) {
          const walked = linkBelow(`${dir === "/" ? "" : dir}/${entry.name}`, below);
          count += walked.lstats;
          if (walked.link || count > MAX_GLOB_ENTRIES) return true;
        }
      }
    } catch {
      // no such directory: the glob matches nothing
    }
    // A later glob segment searches directories this one matched: not followed further.
    return segments.slice(i + 1, last).some(isGlob);
  }
  return false;
}

/**
 * Whether the existing directory `path` holds a symbolic link anywhere below it (or cannot be
 * searched to its end within the entry bound); false for anything but a directory.
 */
export function linkInTree(path: string): boolean {
  const pending = [path];
  let count = 0;
  while (pending.length > 0) {
    const dir = pending.pop()!;
    try {
      if (!Deno.lstatSync(dir).isDirectory) continue;
      for (const entry of Deno.readDirSync(dir)) {
        if (entry.isSymlink || ++count > MAX_GLOB_ENTRIES) return true;
        if (entry.isDirectory) pending.push(`${dir}/${entry.name}`);
      }
    } catch {
      // gone, or not a directory: nothing below it
    }
  }
  return false;
}

/**
 * Whether the literal `segments` below `base` pass through a symbolic link (up to the first that
 * does not exist or is a glob), and how many names were looked at.
 */
function linkBelow(base: string, segments: readonly string[]): { link: boolean; lstats: number } {
  let path = base;
  let lstats = 0;
  for (const segment of segments) {
    if (isGlob(segment) || segment === "..") break;
    path += `/${segment}`;
    lstats++;
    try {
      if (Deno.lstatSync(path).isSymlink) return { link: true, lstats };
    } catch {
      break;
    }
  }
  return { link: false, lstats };
}

function isGlob(segment: string): boolean {
  return /[*?[]|[@!+]\(/.test(segment);
}

/** `/dev/tcp/HOST/PORT` and `/dev/udp/HOST/PORT`, which bash opens as sockets: host and port. */
export function devSocket(path: string): { host: string; port: number | null } | null {
  const match = /^\/dev\/(tcp|udp)\/([^/]+)\/([^/]+)$/.exec(path);
  if (match === null) return null;
  return { host: match[2], port: /^[0-9]{1,5}$/.test(match[3]) ? Number(match[3]) : null };
}

/**
 * A path glob with its glob-free directory prefix resolved physically, so a grant written through
 * a link (`/tmp/**` on macOS, where `/tmp` is `/private/tmp`) matches the physical paths effects
 * carry. A relative glob is returned as it is.
 */
export function physicalGlob(glob: string): string {
  if (!glob.startsWith("/")) return glob;
  const segments = glob.split("/");
  const firstGlob = segments.findIndex((segment) => /[*?[\\]/.test(segment));
  const fixed = firstGlob < 0 ? segments.length : firstGlob;
  const prefix = segments.slice(0, fixed).join("/") || "/";
  const physical = physicalPath(prefix);
  if (physical === null || physical === prefix) return glob;
  return [physical === "/" ? "" : physical, ...segments.slice(fixed)].join("/");
}
