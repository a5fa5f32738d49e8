/** Spawning bash as a process-group leader, for cold runs (`run.ts`) and warm shells alike. */
import { sandboxCommand, type Sandboxing, SCRATCH_MOUNT } from "../sandbox/command.ts";
import { spawnGroupLeader } from "./group_leader.ts";
import { type ShellState, spawnDir } from "./shell_state.ts";

/**
 * Spawns `bash -c <driver> shoal <dir> <extra…>` as K-BASH-1 wants it, unconfined or in
 * `sandbox`: there bwrap leads the group and its pid is the run's (P-SBX-4), and bash sees the
 * scratch directory `dir` at {@link SCRATCH_MOUNT}.
 */
export function spawnDriver(
  bash: string,
  state: ShellState,
  sandbox: Sandboxing | null,
  dir: string,
  driver: string,
  extra: string[] = [],
): Deno.ChildProcess {
  const argv = [bash, "--noprofile", "--norc", "-c", driver, "shoal"];
  if (sandbox === null) return spawnGroupLeader([...argv, dir, ...extra], state);
  return spawnGroupLeader(
    sandboxCommand({ ...sandbox, cwd: spawnDir(state), scratch: dir }, [
      ...argv,
      SCRATCH_MOUNT,
      ...extra,
    ]),
    state,
  );
}
