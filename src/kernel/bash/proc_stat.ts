/**
 * The fields of /proc/PID/stat from the third (the process state) on, so that field N of proc(5)
 * is at index N − 3; null once the process is gone or where there is no /proc. The command name
 * before them may hold spaces and parentheses, so they are read after its last `)`.
 */
export function procStat(pid: number): string[] | null {
  try {
    const stat = Deno.readTextFileSync(`/proc/${pid}/stat`);
    return stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  } catch {
    return null;
  }
}

/**
 * Whether process `pid` has exited: /proc shows it a zombie or dead, or no longer at all (its
 * parent reaped it). False while it runs, and where there is no /proc to tell (not Linux).
 */
export function processExited(pid: number): boolean {
  if (Deno.build.os !== "linux") return false;
  const fields = procStat(pid);
  return fields === null || fields[0] === "Z" || fields[0] === "X";
}
