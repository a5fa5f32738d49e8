/** Environment values the state directory rule reads; empty counts as unset. */
export interface StateDirEnv {
  XDG_STATE_HOME?: string;
  HOME?: string;
}

/**
 * The state directory by the G-STATE-1 rule: `--state-dir` if given, else
 * `$XDG_STATE_HOME/shoal`, else `$HOME/.local/state/shoal`; throws when none applies.
 */
export function stateDir(flag: string | undefined, env: StateDirEnv): string {
  if (flag !== undefined) {
    if (flag === "") throw new Error("--state-dir must not be empty");
    return flag;
  }
  if (env.XDG_STATE_HOME) return `${env.XDG_STATE_HOME.replace(/\/+$/, "")}/shoal`;
  if (env.HOME) return `${env.HOME.replace(/\/+$/, "")}/.local/state/shoal`;
  throw new Error(
    "no state directory: XDG_STATE_HOME and HOME are unset; pass --state-dir DIR",
  );
}
