/** Session shell state that persists between execs (K-BASH-4/5). */
export interface ShellState {
  cwd: string;
  /** Exported environment. */
  env: Map<string, string>;
  /** Non-exported shell variables: name → `declare -p` text. */
  vars: Map<string, string>;
  /** Functions: name → `declare -f` text. */
  funcs: Map<string, string>;
  /** Aliases: name → `alias name='…'` text. */
  aliases: Map<string, string>;
}

/** Entries added/changed (`set`) and removed (`unset`) between two snapshots of one map. */
interface MapChange {
  set: Map<string, string>;
  unset: string[];
}

/** What one exec changed, to be merged into the session in completion order (K-BASH-4). */
export interface ShellChange {
  cwd: string | null;
  env: MapChange;
  vars: MapChange;
  funcs: MapChange;
  aliases: MapChange;
}

/** Bash-managed names that never persist (K-BASH-5). */
const NEVER_PERSIST =
  /^(PWD|OLDPWD|BASH.*|FUNCNAME|LINENO|PIPESTATUS|RANDOM|SECONDS|SHLVL|EPOCH.*|SRANDOM|OPTIND|OPTARG|_|PPID|UID|EUID|GROUPS|HISTCMD|DIRSTACK|COMP_.*|SHELLOPTS|HOSTNAME|HOSTTYPE|MACHTYPE|OSTYPE|SHOAL_TOKEN)$/;

/** A deep copy of a state, taken as an exec's start snapshot (K-BASH-2). */
export function cloneState(s: ShellState): ShellState {
  return {
    cwd: s.cwd,
    env: new Map(s.env),
    vars: new Map(s.vars),
    funcs: new Map(s.funcs),
    aliases: new Map(s.aliases),
  };
}

function diffMap(before: Map<string, string>, after: Map<string, string>): MapChange {
  const set = new Map<string, string>();
  const unset: string[] = [];
  for (const [k, v] of after) {
    if (!NEVER_PERSIST.test(k) && before.get(k) !== v) set.set(k, v);
  }
  for (const k of before.keys()) {
    if (!NEVER_PERSIST.test(k) && !after.has(k)) unset.push(k);
  }
  return { set, unset };
}

/** The changes from an exec's start snapshot to its final state. */
export function diffState(start: ShellState, end: ShellState): ShellChange {
  return {
    cwd: end.cwd !== start.cwd ? end.cwd : null,
    env: diffMap(start.env, end.env),
    vars: diffMap(start.vars, end.vars),
    funcs: diffMap(start.funcs, end.funcs),
    aliases: diffMap(start.aliases, end.aliases),
  };
}

function applyMap(target: Map<string, string>, change: MapChange): void {
  for (const [k, v] of change.set) target.set(k, v);
  for (const k of change.unset) target.delete(k);
}

/** Merges a change into the session state; a cwd that no longer exists is not taken (K-BASH-5). */
export function applyChange(target: ShellState, change: ShellChange): void {
  if (change.cwd !== null) {
    try {
      if (Deno.statSync(change.cwd).isDirectory) target.cwd = change.cwd;
    } catch {
      // the directory is gone: keep the previous cwd
    }
  }
  applyMap(target.env, change.env);
  applyMap(target.vars, change.vars);
  applyMap(target.funcs, change.funcs);
  applyMap(target.aliases, change.aliases);
}

/** The script that restores variables, functions and aliases before the user's source runs. */
export function restoreScript(s: ShellState): string {
  const parts = ["shopt -s expand_aliases"];
  for (const text of s.vars.values()) parts.push(text);
  for (const text of s.funcs.values()) parts.push(text);
  for (const text of s.aliases.values()) parts.push(text);
  return parts.join("\n") + "\n";
}

/**
 * The `bash -c` driver: restores state, sources the user's file, and from an EXIT trap dumps
 * cwd, exported env, variables, functions and aliases as NUL-separated records (K-BASH-7).
 */
export const DRIVER = String.raw`__shoal_dir=$1
set --
__shoal_pid=$BASHPID
__shoal_base=$(builtin compgen -v)
__shoal_dump() {
  set +eu
  local IFS=$' \t\n' __shoal_n __shoal_t __shoal_f
  {
    builtin printf 'C\0%s\0' "$PWD"
    for __shoal_n in $(builtin compgen -e); do
      builtin printf 'E\0%s\0%s\0' "$__shoal_n" "${"${"}!__shoal_n}"
    done
    for __shoal_n in $(builtin compgen -v); do
      case "$__shoal_n" in __shoal_*) continue ;; esac
      case $'\n'"$__shoal_base"$'\n' in *$'\n'"$__shoal_n"$'\n'*) continue ;; esac
      __shoal_t=$(builtin declare -p "$__shoal_n" 2>/dev/null) || continue
      __shoal_f=${"${"}__shoal_t#declare -}
      __shoal_f=${"${"}__shoal_f%% *}
      case "$__shoal_f" in *[xr]*) continue ;; esac
      builtin printf 'V\0%s\0%s\0' "$__shoal_n" "$__shoal_t"
    done
    for __shoal_n in $(builtin compgen -A function); do
      case "$__shoal_n" in __shoal_*) continue ;; esac
      builtin printf 'F\0%s\0%s\0' "$__shoal_n" "$(builtin declare -f "$__shoal_n")"
    done
    for __shoal_n in $(builtin compgen -a); do
      builtin printf 'A\0%s\0%s\0' "$__shoal_n" "$(builtin alias "$__shoal_n")"
    done
    builtin printf 'Z\0'
  } >"$__shoal_dir/state"
}
trap '__shoal_s=$?; [ "$BASHPID" = "$__shoal_pid" ] && __shoal_dump; exit $__shoal_s' EXIT
builtin source "$__shoal_dir/restore"
builtin source "$__shoal_dir/src"
`;

/** Parses the driver's dump; null when it is missing or incomplete (then nothing is merged). */
export function parseDump(bytes: Uint8Array): ShellState | null {
  const fields = new TextDecoder().decode(bytes).split("\0");
  const state: ShellState = {
    cwd: "",
    env: new Map(),
    vars: new Map(),
    funcs: new Map(),
    aliases: new Map(),
  };
  const maps: Record<string, Map<string, string>> = {
    E: state.env,
    V: state.vars,
    F: state.funcs,
    A: state.aliases,
  };
  let i = 0;
  while (i < fields.length) {
    const tag = fields[i];
    if (tag === "Z") return state.cwd ? state : null;
    if (tag === "C") {
      state.cwd = fields[i + 1];
      i += 2;
    } else if (maps[tag] && i + 2 < fields.length) {
      maps[tag].set(fields[i + 1], fields[i + 2]);
      i += 3;
    } else return null;
  }
  return null;
}
