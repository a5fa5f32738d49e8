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

/** The text of the file at `path`, or null when there is none. */
export function textAt(path: string): string | null {
  try {
    return Deno.readTextFileSync(path);
  } catch {
    return null;
  }
}
