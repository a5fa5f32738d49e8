import { detached } from "../../protocol/detached.ts";
import { utf8Decoder } from "../../protocol/utf8.ts";
import { Buffer } from "node:buffer";
import { declarations, unquoted } from "./declare_listing.ts";
import { quoted } from "./quote.ts";

/** Session shell state that persists between execs (K-BASH-4/5). */
export interface ShellState {
  /** The working directory; its lossy display text when {@link cwdBytes} is set. */
  cwd: string;
  /** The working directory's exact bytes when they are not UTF-8 (then authoritative, V-TAG-3). */
  cwdBytes?: Uint8Array;
  /**
   * The `device:inode` of the directory bash must find at the cwd when it enters it: set in
   * a view whose cwd another principal moved the session into (P-SBX-7), so a directory swapped
   * for a symlink since is not entered.
   */
  cwdIdentity?: string;
  /** Exported environment. */
  env: Map<string, string>;
  /** Non-exported shell variables: name → `declare -p` text. */
  vars: Map<string, string>;
  /** Functions: name → `declare -f` text. */
  funcs: Map<string, string>;
  /** Aliases: name → `alias name='…'` text. */
  aliases: Map<string, string>;
}

/** A state's working directory. */
export type ShellCwd = Pick<ShellState, "cwd" | "cwdBytes">;

/** Entries added/changed (`set`) and removed (`unset`) between two snapshots of one map. */
export interface MapChange {
  set: Map<string, string>;
  unset: string[];
}

/** What one exec changed, to be merged into the session in completion order (K-BASH-4). */
export interface ShellChange {
  cwd: ShellCwd | null;
  env: MapChange;
  vars: MapChange;
  funcs: MapChange;
  aliases: MapChange;
}

/**
 * Linux's bound on one `NAME=VALUE` string a program is started with (MAX_ARG_STRLEN, 32 pages,
 * with its NUL).
 */
const MAX_ENV_STRING_BYTES = 131072;
/**
 * The most environment bytes bash is started with: argv and the environment together must fit in
 * a quarter of the stack limit (2 MiB under the usual 8 MiB), and the driver's argv is small.
 */
const MAX_SPAWN_ENV_BYTES = 1 << 20;

/** Bytes an entry takes in a started program's environment: `NAME=VALUE` and its NUL. */
function envEntryBytes(name: string, value: string): number {
  return Buffer.byteLength(name) + Buffer.byteLength(value) + 2;
}

/**
 * The state a bash for `s` is spawned with: exported values too large to start a program with
 * (one over {@link MAX_ENV_STRING_BYTES}, or the largest while all exceed
 * {@link MAX_SPAWN_ENV_BYTES}) move from its environment to its shell variables as
 * `declare -x NAME='…'`, which the restore script exports in the running bash (K-BASH-5). Bash
 * then starts, and holds them exported as a bash that ran `export` holds them: its builtins run,
 * the programs it starts fail with E2BIG, and `unset` recovers. Spawned with them, bash itself
 * could not start, and every later exec of the session failed. `s` itself when nothing moves.
 */
export function launchable(s: ShellState): ShellState {
  const moved = unlaunchable(s.env);
  if (moved.size === 0) return s;
  const out = cloneState(s);
  for (const name of moved) {
    out.vars.set(name, `declare -x ${name}=${quoted(s.env.get(name)!)}`);
    out.env.delete(name);
  }
  return out;
}

/** The environment {@link launchable} spawns bash with, without building its restore. */
export function launchEnv(env: ReadonlyMap<string, string>): ReadonlyMap<string, string> {
  const moved = unlaunchable(env);
  if (moved.size === 0) return env;
  return new Map([...env].filter(([name]) => !moved.has(name)));
}

/** The names of the exported values {@link launchable} moves out of a spawn's environment. */
function unlaunchable(env: ReadonlyMap<string, string>): Set<string> {
  const sizes: [string, number][] = [];
  let total = 0;
  for (const [name, value] of env) {
    const size = envEntryBytes(name, value);
    sizes.push([name, size]);
    total += size;
  }
  const moved = new Set<string>();
  const move = (name: string, size: number) => {
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) return; // no `declare` can export it
    moved.add(name);
    total -= size;
  };
  for (const [name, size] of sizes) if (size > MAX_ENV_STRING_BYTES) move(name, size);
  if (total > MAX_SPAWN_ENV_BYTES) {
    for (const [name, size] of sizes.sort((a, b) => b[1] - a[1])) {
      if (total <= MAX_SPAWN_ENV_BYTES) break;
      if (!moved.has(name)) move(name, size);
    }
  }
  return moved;
}

/** Bash-managed names that never persist (K-BASH-5). */
const NEVER_PERSIST =
  /^(PWD|OLDPWD|BASH.*|FUNCNAME|LINENO|PIPESTATUS|RANDOM|SECONDS|SHLVL|EPOCH.*|SRANDOM|OPTIND|OPTARG|_|PPID|UID|EUID|GROUPS|HISTCMD|DIRSTACK|COMP_.*|SHELLOPTS|SHOAL_TOKEN)$/;

/** A deep copy of a state, taken as an exec's start snapshot (K-BASH-2). */
export function cloneState(s: ShellState): ShellState {
  return {
    cwd: s.cwd,
    ...(s.cwdBytes === undefined ? {} : { cwdBytes: s.cwdBytes }),
    ...(s.cwdIdentity === undefined ? {} : { cwdIdentity: s.cwdIdentity }),
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

const encoder = new TextEncoder();
const strictUtf8 = utf8Decoder(true);
const lossyUtf8 = utf8Decoder();
const ASCII = /^\p{ASCII}*$/u;

/** The bytes of a byte string (one character per byte). */
function latin1Bytes(s: string): Uint8Array {
  return Buffer.from(s, "latin1");
}

/** The working directory's exact bytes. */
export function cwdBytesOf(s: ShellCwd): Uint8Array {
  return s.cwdBytes ?? encoder.encode(s.cwd);
}

/** The working directory of `s` alone: its text, and its bytes when they are not UTF-8. */
export function shellCwd(s: ShellCwd): ShellCwd {
  return s.cwdBytes === undefined ? { cwd: s.cwd } : { cwd: s.cwd, cwdBytes: s.cwdBytes };
}

/** Whether two states have the same working directory, byte for byte. */
export function sameCwd(a: ShellCwd, b: ShellCwd): boolean {
  const [x, y] = [a.cwdBytes, b.cwdBytes];
  if (a.cwd !== b.cwd || x === undefined || y === undefined) return a.cwd === b.cwd && x === y;
  return x.length === y.length && x.every((byte, i) => byte === y[i]);
}

/**
 * Where bash is spawned: the cwd, or for a non-UTF-8 cwd its longest UTF-8 ancestor (a process
 * cwd is given as text); the restore script then changes into the exact bytes.
 */
export function spawnDir(s: ShellCwd): string {
  if (s.cwdBytes === undefined) return s.cwd;
  for (let end = s.cwdBytes.length; end > 0;) {
    end = s.cwdBytes.lastIndexOf(0x2f, end - 1);
    try {
      return strictUtf8.decode(s.cwdBytes.subarray(0, end)) || "/";
    } catch {
      // a non-UTF-8 component remains: one level up
    }
  }
  return "/";
}

/** The changes from an exec's start snapshot to its final state. */
export function diffState(start: ShellState, end: ShellState): ShellChange {
  return {
    cwd: sameCwd(start, end) ? null : { cwd: end.cwd, cwdBytes: end.cwdBytes },
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

/**
 * Merges a change into the session state; a cwd that no longer exists is not taken (K-BASH-5).
 * A non-UTF-8 cwd cannot be stat'ed from here (paths are text) and is taken as bash left it.
 */
export function applyChange(target: ShellState, change: ShellChange): void {
  if (change.cwd?.cwdBytes !== undefined) {
    target.cwd = change.cwd.cwd;
    target.cwdBytes = change.cwd.cwdBytes;
  } else if (change.cwd !== null) {
    try {
      if (Deno.statSync(change.cwd.cwd).isDirectory) {
        target.cwd = change.cwd.cwd;
        delete target.cwdBytes;
      }
    } catch {
      // the directory is gone: keep the previous cwd
    }
  }
  applyMap(target.env, change.env);
  applyMap(target.vars, change.vars);
  applyMap(target.funcs, change.funcs);
  applyMap(target.aliases, change.aliases);
}

/** The command word and attributes of a `declare -p` statement, up to the variable's name. */
const DECLARE_PREFIX = /^declare -[A-Za-z-]+ (?=[A-Za-z_])/;
/** The command word of an `alias -p` definition whose name takes no `--` before it. */
const ALIAS_PREFIX = /^alias (?=[^-])/;

/**
 * Statements as few commands: one that starts with the same `prefix` as the one before it joins
 * that command as one more argument (`declare -- a="1" b="2"`): with many, the restore takes about
 * half the time of a command per statement. The arguments still act in order, each on its own.
 */
function joined(statements: Iterable<string>, prefix: RegExp): string[] {
  const out: string[] = [];
  let last: string | undefined;
  for (const text of statements) {
    const own = prefix.exec(text)?.[0];
    if (own !== undefined && own === last) out[out.length - 1] += " " + text.slice(own.length);
    else out.push(text);
    last = own;
  }
  return out;
}

/**
 * The script that restores variables, aliases and functions before the user's source runs. A
 * non-UTF-8 cwd is entered first (bash was spawned in {@link spawnDir}), leaving `OLDPWD` as a
 * fresh bash has it; when that directory is gone, bash exits at once, runs nothing and dumps
 * nothing (the session state stays unchanged). Aliases come before functions, so no function
 * named `alias` runs in place of the builtin, and are expanded only from the end of the script on
 * (the driver turns expansion on). Empty when there is nothing to restore.
 */
export function restoreScript(s: ShellState): string {
  const parts: string[] = [];
  if (s.cwdBytes !== undefined) {
    parts.push(
      `builtin cd -- ${ansiCQuoted(s.cwdBytes)} || { trap - EXIT; builtin exit 1; }`,
      "builtin unset OLDPWD; builtin export OLDPWD",
    );
  }
  parts.push(
    ...joined(s.vars.values(), DECLARE_PREFIX),
    ...joined(s.aliases.values(), ALIAS_PREFIX),
  );
  for (const text of s.funcs.values()) parts.push(text);
  return parts.map((part) => part + "\n").join("");
}

export { DRIVER, driverFor, WARM_DRIVER } from "./driver.ts";

/**
 * Names a running bash may be given by `export`/`unset` with the same result as receiving them in
 * its environment at start: plain identifiers that bash neither defines itself (`bashVariables`)
 * nor reads only at start-up or on assignment (options, start files, locale, time zone, imported
 * functions).
 */
function assignableName(name: string, bashVariables: ReadonlySet<string>): boolean {
  return /^[A-Za-z_][A-Za-z0-9_]*$/.test(name) && !bashVariables.has(name) &&
    !/^(BASH.*|ENV|SHELLOPTS|POSIXLY_CORRECT|POSIX_PEDANTIC|SHLVL|PWD|OLDPWD|IFS|LANG|LC_.*|TZ|_)$/
      .test(name);
}

/**
 * The script that turns a bash started with environment `from` into one started with `to` (one
 * `export` of the set names, one `unset` of the removed ones), or null when some changed name is
 * not {@link assignableName}: then only a fresh spawn gives that environment.
 */
export function envDelta(
  from: ReadonlyMap<string, string>,
  to: ReadonlyMap<string, string>,
  bashVariables: ReadonlySet<string>,
): string | null {
  let [exports, unsets] = ["", ""];
  for (const [name, value] of to) {
    if (from.get(name) === value) continue;
    if (!assignableName(name, bashVariables)) return null;
    exports += ` ${name}=${quoted(value)}`;
  }
  for (const name of from.keys()) {
    if (to.has(name)) continue;
    if (!assignableName(name, bashVariables)) return null;
    unsets += ` ${name}`;
  }
  return (exports && `builtin export${exports}\n`) + (unsets && `builtin unset -v${unsets}\n`);
}

/**
 * The line `declare -f` ends a function with: its closing brace (and the function's own
 * redirections), or the line of its attributes (`declare -fx name`) after that.
 */
const FUNCTION_END = /^\}(?: .*)?$|^declare -f[a-z]* \S+$/;

/**
 * Splits `declare -f` output into functions by their header lines: `name () ` and then `{ `,
 * which bash writes for every function whatever its body, first or right after the
 * {@link FUNCTION_END} of the one before. A body's heredoc or string may hold a line `bar () `
 * alone, or one followed by `{ `: taken as a header, it cut the function in two, a real `bar`
 * defined later was replaced by the cut-off part, and each later restore ran the rest of the
 * heredoc as commands.
 */
function splitFunctions(text: string, into: Map<string, string>): void {
  const headers = [...text.matchAll(/^(\S+) \(\) \n(?=\{ $)/gm)].filter((m) => {
    if (m.index === 0) return true;
    const line = text.slice(text.lastIndexOf("\n", m.index - 2) + 1, m.index - 1);
    return FUNCTION_END.test(line);
  });
  headers.forEach((m, i) => {
    const end = i + 1 < headers.length ? headers[i + 1].index : text.length;
    if (m[1].startsWith("__shoal_")) return;
    into.set(detached(m[1]), detached(text.slice(m.index, end).trimEnd()));
  });
}

/** One `alias -p` definition: its name and its value, single-quoted as bash writes it (`'\''`). */
const ALIAS_DEFINITION = /alias (?:-- )?([^=\n]+)=(?:'[^']*'|\\')+(?=\n|$)/y;

/**
 * Splits `alias -p` output into definitions: `alias name='…'`, `alias -- -x='…'` for `-x`. A
 * definition ends where its quoted value does: a value may hold a line that starts `alias `,
 * which was taken as a definition of its own, cutting the value.
 */
function splitAliases(text: string, into: Map<string, string>): void {
  ALIAS_DEFINITION.lastIndex = 0;
  for (let m = ALIAS_DEFINITION.exec(text); m !== null; m = ALIAS_DEFINITION.exec(text)) {
    into.set(detached(m[1]), detached(m[0]));
    if (text[ALIAS_DEFINITION.lastIndex] === "\n") ALIAS_DEFINITION.lastIndex++;
  }
}

/** The NUL-separated fields of a dump, as bytes. */
function splitFields(bytes: Uint8Array): Uint8Array[] {
  const fields: Uint8Array[] = [];
  let start = 0;
  for (let nul = bytes.indexOf(0); nul >= 0; nul = bytes.indexOf(0, start)) {
    fields.push(bytes.subarray(start, nul));
    start = nul + 1;
  }
  fields.push(bytes.subarray(start));
  return fields;
}

/** Bytes as a bash ANSI-C quoted word (`$'a\377b'`): printable ASCII kept, the rest octal. */
function ansiCQuoted(bytes: Uint8Array): string {
  let out = "$'";
  for (const b of bytes) {
    const printable = b >= 0x20 && b < 0x7f && b !== 0x27 && b !== 0x5c;
    out += printable ? String.fromCharCode(b) : "\\" + b.toString(8).padStart(3, "0");
  }
  return out + "'";
}

/**
 * Sorts a `declare -p` listing into the state: an exported scalar into the environment, other
 * variables as their `declare -p` text, except bash's own, the driver's (`__shoal_*`) and declared
 * but unset ones but for `export NAME`; an exported scalar with other attributes (`declare -ix
 * N=5`) both, so a later `N+=1` adds as in one bash; a read-only one is never persisted (K-BASH-5),
 * so it keeps what it was in `start`, the state the run began with. Namerefs and arrays, which bash
 * never exports, stay shell variables with all their attributes. Bash lists names in byte order
 * (`_x` before `a`); the state keeps them as A–Z, a–z, then `_`.
 */
function takeVariables(
  listing: Uint8Array,
  bashVariables: ReadonlySet<string>,
  start: ShellState,
  state: ShellState,
  readOnly?: string[],
): void {
  const all = declarations(
    Buffer.from(listing.buffer, listing.byteOffset, listing.length).toString("latin1"),
  );
  const underscore = all.filter((d) => d.name.startsWith("_"));
  for (const d of [...all.filter((d) => !d.name.startsWith("_")), ...underscore]) {
    if (d.name.startsWith("__shoal_")) continue;
    if (d.flags.includes("r")) {
      readOnly?.push(d.name);
      const [env, text] = [start.env.get(d.name), start.vars.get(d.name)];
      if (env !== undefined) state.env.set(d.name, env);
      if (text !== undefined) state.vars.set(d.name, text);
      continue;
    }
    const exported = d.flags.includes("x") && !/[aAn]/.test(d.flags);
    if (d.value === null) {
      // `export NAME`: bash exports a value assigned later, on a later line too
      if (exported && !bashVariables.has(d.name)) {
        state.vars.set(detached(d.name), detached(d.text));
      }
      continue;
    }
    if (exported) {
      const value = unquoted(d.value);
      // other attributes (`declare -ix`, `-lx`, `-ux`) apply to later assignments: restored too
      const attributes = d.flags !== "x" && !bashVariables.has(d.name);
      if (ASCII.test(value)) {
        state.env.set(detached(d.name), detached(value));
        if (attributes) state.vars.set(detached(d.name), detached(d.text));
      } else {
        const bytes = latin1Bytes(value);
        try {
          state.env.set(detached(d.name), strictUtf8.decode(bytes));
          if (attributes) state.vars.set(detached(d.name), lossyUtf8.decode(latin1Bytes(d.text)));
        } catch {
          const text = `declare -${d.flags} ${d.name}=${ansiCQuoted(bytes)}`;
          state.vars.set(detached(d.name), detached(text));
        }
      }
    } else if (!bashVariables.has(d.name)) {
      const text = ASCII.test(d.text) ? detached(d.text) : lossyUtf8.decode(latin1Bytes(d.text));
      state.vars.set(detached(d.name), text);
    }
  }
}

/**
 * The exported names of `env` that are no shell identifier (`spring.profiles.active`, `A-B`), with
 * their values, as one text (`NAME=VALUE` lines ending in NUL; empty when none): bash passes such a
 * name on to every program it starts, but lists none and can neither set nor unset one, so a run
 * ends with each as it began. Read from no dump, the first run's removed them from the session.
 */
export function unlistedEnv(env: ReadonlyMap<string, string>): string {
  let out = "";
  for (const [name, value] of env) if (!IDENTIFIER.test(name)) out += `${name}=${value}\0`;
  return out;
}

/** A name bash can list, set or unset as a variable. */
const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]*$/;

/**
 * Parses the driver's dump of a run that began with state `start`; null when it is missing or
 * incomplete (then nothing is merged). Variables bash itself defines (`bashVariables`) are not
 * session state, and read-only ones keep what they were in `start`; exported names that are no
 * identifier, which no dump lists, are carried from `start` ({@link unlistedEnv}). An exported
 * value that is not valid UTF-8 cannot travel in a process environment (which Deno builds from
 * strings), so it is kept with the shell variables as `declare -x NAME=$'…'`, exact to the byte,
 * and is exported again when those are restored (K-BASH-5); `session.env` omits it (K-SESS-1).
 * `readOnly`, when given, gets the names of the read-only variables listed: the only names whose
 * values in `start` the result depends on.
 */
export function parseDump(
  bytes: Uint8Array,
  bashVariables: ReadonlySet<string>,
  start: ShellState,
  readOnly?: string[],
): ShellState | null {
  const raw = splitFields(bytes);
  const text = (i: number) => lossyUtf8.decode(raw[i]);
  const state: ShellState = {
    cwd: "",
    env: new Map(),
    vars: new Map(),
    funcs: new Map(),
    aliases: new Map(),
  };
  let i = 0;
  while (i < raw.length) {
    switch (text(i)) {
      case "Z":
        if (!state.cwd) return null;
        for (const [name, value] of start.env) {
          if (!IDENTIFIER.test(name)) state.env.set(name, value);
        }
        return state;
      case "C":
        state.cwd = text(i + 1);
        try {
          strictUtf8.decode(raw[i + 1]);
        } catch {
          state.cwdBytes = raw[i + 1].slice();
        }
        i += 2;
        break;
      case "D":
        try {
          takeVariables(raw[i + 1], bashVariables, start, state, readOnly);
        } catch {
          return null; // not a listing bash wrote
        }
        i += 2;
        break;
      case "F":
        splitFunctions(text(i + 1), state.funcs);
        i += 2;
        break;
      case "A":
        splitAliases(text(i + 1), state.aliases);
        i += 2;
        break;
      default:
        return null;
    }
  }
  return null;
}

/**
 * Names of the variables a bare bash defines by itself, which never count as session state. Asked
 * without blocking: at kernel start the modules load meanwhile (issue 33).
 */
export async function bashOwnVariables(bash: string): Promise<Set<string>> {
  const out = await new Deno.Command(bash, {
    args: ["--noprofile", "--norc", "-c", "compgen -v"],
    env: {},
    clearEnv: true,
    stdin: "null",
    stdout: "piped",
    stderr: "null",
  }).output();
  return new Set(new TextDecoder().decode(out.stdout).split("\n").filter((n) => n !== ""));
}
