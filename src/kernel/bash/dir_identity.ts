/** The (device, inode) of a directory, or null when it cannot be stat'ed. */
export function dirIdentity(path: string): string | null {
  try {
    const info = Deno.statSync(path);
    return info.isDirectory ? `${info.dev}:${info.ino}` : null;
  } catch {
    return null;
  }
}
