/** Finding a resident sandbox's launcher among a process's descendants (Linux, through `ps`). */
import { liveChildren } from "../../tests/_support/proc.ts";

/** The pid of the launcher (compiled, or perl's) some resident sandbox below `pid` runs, or null. */
export function launcherPid(pid: number): number | null {
  for (const child of liveChildren(pid)) {
    if (/^(\/usr\/bin\/perl -e|\/dev\/shoal\/launcher$)/.test(child.command)) return child.pid;
    const below = launcherPid(child.pid);
    if (below !== null) return below;
  }
  return null;
}
