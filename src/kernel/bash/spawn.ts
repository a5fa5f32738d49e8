/** Spawning bash as a process-group leader, for cold runs (`run.ts`) and warm shells alike. */
import { type ShellState, spawnDir } from "./shell_state.ts";

/**
 * Spawns `argv` as K-BASH-1 wants it: a new process group, stdin /dev/null, the state's cwd and
 * exactly its exported environment, output piped.
 */
export function spawnGroupLeader([cmd, ...args]: string[], state: ShellState): Deno.ChildProcess {
  return new Deno.Command(cmd, {
    args,
    cwd: spawnDir(state),
    env: Object.fromEntries(state.env),
    clearEnv: true,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
    detached: true,
  }).spawn();
}

/** Spawns `bash -c <driver> shoal <args…>` unconfined, as K-BASH-1 wants it. */
export function spawnDriver(bash: string, state: ShellState, args: string[]): Deno.ChildProcess {
  return spawnGroupLeader([bash, "--noprofile", "--norc", "-c", ...args], state);
}
