/** Finding the resident sandboxes' launchers among a process's descendants (Linux, through `ps`). */
import { liveChildren } from "../../tests/_support/proc.ts";

/** The pids of the launchers (compiled, or perl's) the resident sandboxes below `pid` run. */
export function launcherPids(pid: number): number[] {
  return liveChildren(pid).flatMap((child) =>
    /^(\/usr\/bin\/perl -e|\/dev\/shoal\/launcher$)/.test(child.command)
      ? [child.pid]
      : launcherPids(child.pid)
  );
}
