/**
 * The session an agent works in for one project (M-ONB-1): each project its own shell state, so
 * two clients of one agent open on two projects never move each other's working directory.
 */

/** Longest part of the name taken from the project directory's own name. */
const NAME_CHARS = 40;

/**
 * The session name of the project at the absolute path `dir`: its last component (characters a
 * session name cannot hold as `_`, cut to {@link NAME_CHARS}) and 8 hex digits of the 32-bit
 * FNV-1a hash of the path's UTF-8 bytes, trailing `/` dropped, e.g. `shoal-3f9c0a12` (K-ATTACH-1's
 * form).
 */
export function projectSession(dir: string): string {
  const trimmed = dir.replace(/\/+$/, "");
  const base = trimmed.slice(trimmed.lastIndexOf("/") + 1).replace(/[^A-Za-z0-9._-]/g, "_");
  let hash = 0x811c9dc5;
  for (const byte of new TextEncoder().encode(trimmed)) {
    hash = Math.imul(hash ^ byte, 0x01000193) >>> 0;
  }
  return `${(base || "root").slice(0, NAME_CHARS)}-${hash.toString(16).padStart(8, "0")}`;
}
