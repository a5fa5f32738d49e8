/** Spawning bash as a process-group leader, for cold runs (`run.ts`) and warm shells alike. */
import type { Resident } from "../sandbox/resident.ts";
import type { BashChild } from "../bash/bash_child.ts";
import { spawnGroupLeader } from "../bash/group_leader.ts";
import { driverFor, type ShellState, WARM_DRIVER } from "../bash/shell_state.ts";

/**
 * Spawns `bash -c <driver> shoal <dir> <extra…>` as K-BASH-1 wants it (the driver naming its
 * state file in `dir`, {@link driverFor}), unconfined or inside
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
  const seen = resident === null ? dir : resident.inside(dir);
  const argv = [bash, "--noprofile", "--norc", "-c", driverFor(driver, seen), "shoal", seen];
  if (resident === null) return spawnGroupLeader([...argv, ...extra], logicalPwd(state));
  const child = resident.spawn(logicalPwd(state), [...argv, ...extra], dir);
  resident.hold(child, driver === WARM_DRIVER); // a warm shell waits for its source
  return child;
}

/**
 * `state` with `PWD` in its environment naming its cwd, the path bash then keeps as its logical
 * working directory when it names the directory bash starts in (else bash takes the physical path,
 * as before), unconfined or in a sandbox, which binds the cwd at its path: the `PWD` the session
 * inherited (the kernel's own) named another, so a cwd entered through a symlink became its
 * target's path in the next exec (`pwd` showed it, `cd ..` left for the target's parent), unlike
 * the next line of one bash. A non-UTF-8 cwd, entered later by the restore, keeps the state as it
 * is.
 */
function logicalPwd(state: ShellState): ShellState {
  if (state.cwdBytes !== undefined || state.env.get("PWD") === state.cwd) return state;
  return { ...state, env: new Map(state.env).set("PWD", state.cwd) };
}
