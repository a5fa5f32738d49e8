/**
 * The (device, inode, birth time) of a directory, or null when it cannot be stat'ed. The birth
 * time tells a directory made again from the one removed: ext4 gives the new one the freed inode
 * at once, so `tmp/` removed with the state directory and made again by a warm shell's scratch
 * was taken for the old one (nothing said so, kernel_log_test failed under load).
 */
export function dirIdentity(path: string): string | null {
  try {
    const info = Deno.statSync(path);
    return info.isDirectory ? `${info.dev}:${info.ino}:${info.birthtime?.getTime() ?? ""}` : null;
  } catch {
    return null;
  }
}
