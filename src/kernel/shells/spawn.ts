/** Spawning bash as a process-group leader, for cold runs (`run.ts`) and warm shells alike. */
import type { Resident } from "../sandbox/resident.ts";
import type { BashChild } from "../bash/bash_child.ts";
import { spawnGroupLeader } from "../bash/group_leader.ts";
import { type ShellState, WARM_DRIVER } from "../bash/shell_state.ts";

/**
 * Spawns `bash -c <driver> shoal <dir> <extra…>` as K-BASH-1 wants it, unconfined or inside
 * `resident` ({@link Resident.spawn}: its launcher's bash, or nsenter, leads the group and its
 * host pid is the run's, P-SBX-4): bash sees the scratch directory `dir` (from the resident's
 * pool) at {@link Resident.inside}, and the run counts as the resident's user until it exits.
 */
export function spawnDriver(
  bash: string,
  state: ShellState,
  resident: Resident | null,
  dir: string,
  driver: string,
  extra: string[] = [],
): BashChild {
  const argv = [bash, "--noprofile", "--norc", "-c", driver, "shoal"];
  if (resident === null) return spawnGroupLeader([...argv, dir, ...extra], state);
  const child = resident.spawn(state, [...argv, resident.inside(dir), ...extra], dir);
  resident.hold(child, driver === WARM_DRIVER); // a warm shell waits for its source
  return child;
}
