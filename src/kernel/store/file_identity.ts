/**
 * The (device, inode) of the file at `path`, or null when there is none: one that differs from
 * an earlier look is another file at that path since (the first removed, or moved aside). Deno's
 * own stat: node's `statSync` builds its `Stats` at ~10 µs more a call (issue 33).
 */
export function fileIdentity(path: string): string | null {
  try {
    const info = Deno.statSync(path);
    return `${info.dev}:${info.ino}`;
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) return null;
    throw e;
  }
}
