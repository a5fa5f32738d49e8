/** Test support: what is on the file system. */

/** Whether anything is at `path` (a dangling symlink counts). */
export function exists(path: string): boolean {
  try {
    Deno.lstatSync(path);
    return true;
  } catch {
    return false;
  }
}
