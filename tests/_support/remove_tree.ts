/** Test support: `rm -rf` of a directory the kernel is making files in. */

/**
 * `rm -rf` of `dir`, tried again while the kernel makes files in it meanwhile (its blanks), as
 * a user would run it again on "Directory not empty".
 */
export function removeTree(dir: string): void {
  for (let tries = 1;; tries++) {
    try {
      return Deno.removeSync(dir, { recursive: true });
    } catch (e) {
      if (tries >= 50 || !(e instanceof Error && /not empty/i.test(e.message))) throw e;
    }
  }
}
