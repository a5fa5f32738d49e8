/** Test support: a small tmpfs mounted over a directory, to run the kernel out of disk space. */

/**
 * Mounts a tmpfs of `size` (e.g. `4m`) over `dir`; returns why it cannot (not Linux, not root,
 * no `mount`), or null once mounted.
 */
export function mountTmpfs(dir: string, size: string): string | null {
  if (Deno.build.os !== "linux") return `tmpfs mounts need Linux (this is ${Deno.build.os})`;
  try {
    const out = new Deno.Command("mount", {
      args: ["-t", "tmpfs", "-o", `size=${size},mode=0700`, "tmpfs", dir],
      stdout: "null",
      stderr: "piped",
    }).outputSync();
    if (out.success) return null;
    return `mount -t tmpfs failed: ${new TextDecoder().decode(out.stderr).trim()}`;
  } catch (e) {
    return `mount is not available: ${e}`;
  }
}

/** Unmounts `dir` (lazily, so a process still holding a file there cannot keep it busy). */
export function unmount(dir: string): void {
  new Deno.Command("umount", { args: ["-l", dir], stdout: "null", stderr: "null" }).outputSync();
}

/** Bytes used on the file system holding `dir`. */
export function usedBytes(dir: string): number {
  const out = new Deno.Command("df", { args: ["-k", "-P", dir], stdout: "piped" }).outputSync();
  const fields = new TextDecoder().decode(out.stdout).trim().split("\n")[1].split(/\s+/);
  return Number(fields[2]) * 1024;
}
