/** A fresh private directory of the kernel's, with an error that says where it could not be. */

/**
 * Makes a new directory named `prefix` plus a random part in `parent`; throws naming `what` and
 * `parent` when it cannot (no space or inode left, a read-only file system): the bare error of
 * the file system says only "tmpdir", which tells the user nothing.
 */
export function madeIn(parent: string, prefix: string, what: string): string {
  try {
    return Deno.makeTempDirSync({ dir: parent, prefix });
  } catch (e) {
    throw new Error(`cannot make ${what} in ${parent}: ${(e as Error).message}`);
  }
}
