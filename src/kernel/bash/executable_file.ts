/** Whether `path` is a regular file (symlinks followed) with an execute bit: one `execvp` may run. */
export function isExecutableFile(path: string): boolean {
  try {
    const info = Deno.statSync(path);
    return info.isFile && ((info.mode ?? 0) & 0o111) !== 0;
  } catch {
    return false;
  }
}
