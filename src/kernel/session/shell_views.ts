import {
  applyChange,
  cloneState,
  type MapChange,
  type ShellChange,
  type ShellState,
} from "../bash/shell_state.ts";
import { declarations, valueWords } from "../bash/declare_listing.ts";
import { CwdOrigin } from "./cwd_origin.ts";
import { guardedName } from "./guarded_names.ts";

/** The maps of a shell state a change can touch. */
const NAMESPACES = ["env", "vars", "funcs", "aliases"] as const;
type Namespace = typeof NAMESPACES[number];

/** Entries one principal changed for itself: the value, or null where it removed the entry. */
type OwnChanges = Record<Namespace, Map<string, string | null>>;

/**
 * A shell variable's `declare` attributes that make a later use of it run code: a nameref's
 * subscript (`declare -n r='a[$(…)]'`) is expanded whenever `r` is used, and a value assigned to
 * an integer variable is evaluated as arithmetic, whose subscripts expand too.
 */
const EVALUATING_ATTRIBUTES = /^declare -[A-Za-z]*[ni]/;

/**
 * A command or process substitution, or a parameter expansion, in a variable's value: bash
 * evaluates a value read in arithmetic (`$((n))`, `(( n ))`, `[[ $n -gt 0 ]]`) as an expression,
 * and expands the subscripts in it, so `x[$(cmd)]` runs cmd in the exec that reads it, and so does
 * `x[${t@P}]` with t='\044(cmd)' (prompt expansion makes the `$`, then substitutes). (In a
 * `declare -p` text a `$` is escaped, `\$(`, or quoted as `$'…'`: the pattern finds both.)
 */
const SUBSTITUTION = /\$[({]|`|[<>]\(/;

/**
 * An assignment in an arithmetic expression (`=`, `+=`, `<<=` …, not `==`, `!=`, `<=`, `>=`): a
 * value read in arithmetic assigns what it names, so retries='PATH=0' (or 'a[PATH=0]' through
 * `${!x}`) set the reader's PATH to the directory `0` of the shared cwd, and its next `ls` ran
 * `0/ls`.
 */
const ASSIGNMENT = /(?:^|[^=!<>]|<<|>>)=(?!=)/;

/**
 * A byte beyond ASCII in a shell variable's `declare -p` text, which the reader's bash parses:
 * in a locale whose characters may end in a 0x5c byte (Big5, GBK, GB18030), the byte before a
 * `\"` the listing escaped (written in another locale) takes the backslash, and the quote closes
 * the value: v=$'\xef\xbf\xbd";cmd;#' ran cmd in a Big5 reader's restore.
 */
const NOT_ASCII = /\P{ASCII}/u;

/** Whether a value (a shell variable's `declare -p` text for `vars`) holds an {@link ASSIGNMENT}. */
function assigns(namespace: Namespace, value: string): boolean {
  if (namespace !== "vars") return ASSIGNMENT.test(value);
  const listed = declarations(value)[0]?.value ?? null;
  const words = listed === null ? [] : valueWords(listed) ?? [listed];
  return words.some((word) => ASSIGNMENT.test(word));
}

/**
 * Whether an entry is guarded: every function and alias, variables by {@link guardedName}, shell
 * variables with {@link EVALUATING_ATTRIBUTES} or a listing {@link NOT_ASCII}, and variables whose
 * value holds a {@link SUBSTITUTION} or an {@link ASSIGNMENT} (`value` null: the entry is removed).
 */
function guarded(namespace: Namespace, name: string, value: string | null): boolean {
  if (namespace === "funcs" || namespace === "aliases" || guardedName(name)) return true;
  if (value === null) return false;
  if (namespace === "vars" && (EVALUATING_ATTRIBUTES.test(value) || NOT_ASCII.test(value))) {
    return true;
  }
  return SUBSTITUTION.test(value) || assigns(namespace, value);
}

/**
 * Linux's bound on one `NAME=VALUE` string a program is started with (MAX_ARG_STRLEN, 32 pages,
 * with its NUL): one longer makes every exec fail with E2BIG.
 */
const MAX_ENV_STRING_BYTES = 131072;
/**
 * The most an agent's changes may bring the shared exported environment, and the shared shell
 * variables, to. The whole of argv and the environment must fit in a quarter of the stack limit
 * (2 MiB under the usual 8 MiB), so an environment near that stops every program starting; every
 * exec of the session restores its shell variables, so 100 MB of them made each of the human's
 * execs take half a minute.
 */
const MAX_SHARED_BYTES = 1 << 20;

const encoder = new TextEncoder();

/** Bytes an entry takes: `NAME=VALUE` and its NUL in a started program's environment. */
function entryBytes(name: string, value: string): number {
  return encoder.encode(name).length + encoder.encode(value).length + 2;
}

/** The bytes of the entries of `map` ({@link entryBytes}). */
function mapBytes(map: ReadonlyMap<string, string>): number {
  let n = 0;
  for (const [name, value] of map) n += entryBytes(name, value);
  return n;
}

/** Whether a map change sets or removes anything. */
function changes(change: MapChange): boolean {
  return change.set.size > 0 || change.unset.length > 0;
}

function emptyChange(): MapChange {
  return { set: new Map(), unset: [] };
}

/**
 * A session's shell state as each principal sees it (P-SBX-7) and what differs from the state the
 * session started with (K-EFF-6). The owner (the local human) changes the shared state, which
 * every principal sees. Another principal's changes to guarded entries (variables that make bash
 * or a program run code or load files, namerefs and integer variables, values with a command
 * substitution, a parameter expansion or an arithmetic assignment, shell variables whose listing
 * is not ASCII, every function and alias) stay its own, seen by its execs only; so does a variable that would make the shared environment too large to start a program
 * with, or the shared variables too large to restore at every exec. The rest of what it changes (the cwd, other variables) is shared, as in a collaboration
 * room (G-TRUST-4).
 */
export class ShellViews {
  readonly #shared: ShellState;
  /** The exported environment the session started with. */
  readonly #start: ReadonlyMap<string, string>;
  readonly #own = new Map<string, OwnChanges>();
  readonly #cwd: CwdOrigin;
  #merges = 0;

  constructor(start: ShellState, readonly owner: string) {
    this.#shared = start;
    this.#start = new Map(start.env);
    this.#cwd = new CwdOrigin(start, owner);
  }

  /**
   * The state `principal`'s next exec starts from: the shared state with its own guarded changes
   * over it, in the owner's cwd where {@link CwdOrigin} says so. Callers must not change it (it
   * may be the shared state itself).
   */
  view(principal: string): ShellState {
    const own = principal === this.owner ? undefined : this.#own.get(principal);
    const cwd = this.#cwd.for(principal, this.#shared);
    if (own === undefined && cwd === null) return this.#shared;
    const state = cloneState(this.#shared);
    if (cwd !== null) {
      state.cwd = cwd.cwd;
      if (cwd.cwdBytes === undefined) delete state.cwdBytes;
      else state.cwdBytes = cwd.cwdBytes;
      if (cwd.cwdIdentity !== undefined) state.cwdIdentity = cwd.cwdIdentity;
    }
    for (const namespace of NAMESPACES) {
      for (const [name, value] of own?.[namespace] ?? []) {
        if (value === null) state[namespace].delete(name);
        else state[namespace].set(name, value);
      }
    }
    return state;
  }

  /**
   * How many execs that changed something have been merged so far: a view taken before a wait
   * is still the one a run would start from only while this has not moved (K-PLAN-3).
   */
  get merges(): number {
    return this.#merges;
  }

  /** Merges one finished exec of `principal` into the session (K-BASH-4, P-SBX-7). */
  merge(principal: string, change: ShellChange): void {
    if (change.cwd !== null || NAMESPACES.some((n) => changes(change[n]))) this.#merges++;
    const before = { cwd: this.#shared.cwd, cwdBytes: this.#shared.cwdBytes };
    if (principal === this.owner) applyChange(this.#shared, change);
    else this.#mergeOther(principal, change);
    this.#cwd.merged(principal, before, this.#shared);
  }

  /** Merges one finished exec of a principal other than the owner. */
  #mergeOther(principal: string, change: ShellChange): void {
    let own = this.#own.get(principal);
    if (own === undefined) {
      own = { env: new Map(), vars: new Map(), funcs: new Map(), aliases: new Map() };
      this.#own.set(principal, own);
    }
    const shared: ShellChange = {
      cwd: change.cwd,
      env: emptyChange(),
      vars: emptyChange(),
      funcs: emptyChange(),
      aliases: emptyChange(),
    };
    const sizes = { env: mapBytes(this.#shared.env), vars: mapBytes(this.#shared.vars) };
    /**
     * Whether sharing `name=value` of `namespace` would leave the session unable to start a
     * program (E2BIG for the human's every exec and PTY) or slow every exec restoring it; counts
     * it in when not.
     */
    const oversized = (namespace: "env" | "vars", name: string, value: string) => {
      const size = entryBytes(name, value);
      const was = this.#shared[namespace].get(name);
      const grown = sizes[namespace] + size - (was === undefined ? 0 : entryBytes(name, was));
      if (grown > MAX_SHARED_BYTES) return true;
      if (namespace === "env" && size > MAX_ENV_STRING_BYTES) return true;
      sizes[namespace] = grown;
      return false;
    };
    for (const namespace of NAMESPACES) {
      // A variable that loses its evaluating attributes is shared again, and no longer its own.
      for (const [name, value] of change[namespace].set) {
        const kept = guarded(namespace, name, value) ||
          ((namespace === "env" || namespace === "vars") && oversized(namespace, name, value));
        if (kept) own[namespace].set(name, value);
        else {
          own[namespace].delete(name);
          shared[namespace].set.set(name, value);
        }
      }
      for (const name of change[namespace].unset) {
        if (guarded(namespace, name, null)) own[namespace].set(name, null);
        else {
          own[namespace].delete(name);
          shared[namespace].unset.push(name);
        }
      }
    }
    applyChange(this.#shared, shared);
  }

  /**
   * Exported names whose value in `principal`'s view differs from the session's start (set,
   * changed or removed by any exec since), sorted: only these may configure a command (K-EFF-6).
   */
  changedEnv(principal: string): string[] {
    const env = this.view(principal).env;
    const names = new Set([...env.keys(), ...this.#start.keys()]);
    return [...names].filter((name) => env.get(name) !== this.#start.get(name)).sort();
  }
}
