/**
 * Walks the shoal bash AST and records effects (K-EFF-3). It tracks the set of directories the
 * shell may be in (so `cd d && rm x` deletes `d/x`), which variables the source assigns (so only
 * untouched exported variables are substituted), and functions defined in the same source.
 */
import type {
  ArithmExpr,
  Assign,
  CallExpr,
  Command,
  DeclClause,
  File,
  FuncDecl,
  ParamExp,
  Redirect,
  Stmt,
  TestExpr,
  Word,
  WordPart,
} from "../bash/ast.ts";
import { EFFECT_ANALYSIS_STEPS } from "../../protocol/limits.ts";
import type { EffectSet } from "./_effect_set.ts";
import type { EffectState, FsKind } from "./effects.ts";
import { globMayClimb, normalizePath, resolvePath } from "./_paths.ts";
import { type ArgValue, type CommandIO, knownCommand } from "./_commands.ts";
import {
  commandAssignments,
  decodeAnsiC,
  hasBraceExpansion,
  staticWord,
} from "./_assigned_names.ts";

/** Directories the shell may be in; null when unknown. */
type Cwds = readonly string[] | null;

/** Possible directories after a command succeeded (`ok`) or failed (`fail`). */
interface Flow {
  ok: Cwds;
  fail: Cwds;
}

/** Builtins with no effect of their own (K-EFF-3a first row, plus harmless relatives). */
const QUIET_BUILTINS = new Set([
  "echo",
  "printf",
  "true",
  "false",
  ":",
  "test",
  "[",
  "read",
  "local",
  "return",
  "exit",
  "shift",
  "shopt",
  "type",
  "pwd",
  "let",
  "wait",
  "break",
  "continue",
  "umask",
  "getopts",
  "times",
  "caller",
  "dirs",
  "help",
  "jobs",
]);

/** Builtins the table sends to `opaque`. */
const OPAQUE_BUILTINS = new Set(["eval", "source", ".", "exec", "kill", "builtin"]);

/** Every bash builtin; one not handled above is `opaque` without `proc_spawn`. */
const BASH_BUILTINS = new Set([
  ...QUIET_BUILTINS,
  ...OPAQUE_BUILTINS,
  "alias",
  "bg",
  "bind",
  "cd",
  "command",
  "compgen",
  "complete",
  "compopt",
  "declare",
  "disown",
  "enable",
  "export",
  "fc",
  "fg",
  "hash",
  "history",
  "logout",
  "mapfile",
  "popd",
  "pushd",
  "readarray",
  "readonly",
  "set",
  "suspend",
  "trap",
  "typeset",
  "ulimit",
  "unalias",
  "unset",
]);

/** Directories whose programs are trusted to be the commands the table describes. */
const SYSTEM_DIRS = ["/bin/", "/usr/bin/", "/usr/local/bin/", "/sbin/", "/usr/sbin/"];

/** Variables bash itself changes; never substituted statically. */
const BASH_MANAGED =
  /^(PWD|OLDPWD|SHLVL|RANDOM|SRANDOM|SECONDS|LINENO|FUNCNAME|PIPESTATUS|OPTIND|OPTARG|_|HISTCMD|BASH.*|EPOCH.*)$/;

/** Per-command assignments that change which program runs or what it executes. */
const DANGEROUS_OVERRIDE =
  /^(LD_.*|PATH|BASH_ENV|ENV|SHELLOPTS|BASHOPTS|PS4|IFS|GIT_.*|PAGER|LESSOPEN|LESSCLOSE|BASH_FUNC_.*)$/;

const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** Raised when the work budget is spent. */
class BudgetExceeded extends Error {}

interface Assignment {
  offset: number;
  persistent: boolean;
}

interface FunctionDef {
  decl: FuncDecl;
  /** Defined unconditionally at top level, and never unset in the source. */
  reliable: boolean;
}

/** One effect derivation over one AST. */
export class Analyzer {
  readonly #file: File;
  readonly #state: EffectState;
  readonly #effects: EffectSet;
  readonly #assignments = new Map<string, Assignment[]>();
  readonly #functions = new Map<string, FunctionDef[]>();
  readonly #unset = new Set<string>();
  readonly #memo = new Map<string, Flow>();
  readonly #active = new Set<string>();
  /** Alias names the source defines; later calls to them are opaque. */
  readonly #aliases = new Set<string>();
  #ifsChanged: boolean;
  /** A command may assign a variable named by a dynamic word: any variable may have changed. */
  #anyAssigned = false;
  #steps = 0;
  /** References at or before this offset may see assignments made before it (loops, functions). */
  #floor = 0;

  constructor(file: File, state: EffectState, effects: EffectSet) {
    this.#file = file;
    this.#state = state;
    this.#effects = effects;
    this.#ifsChanged = Object.hasOwn(state.env, "IFS");
  }

  /** Derives the effects of the whole file into the effect set. */
  run(): void {
    try {
      this.#collect(this.#file);
      for (const stmt of this.#file.stmts) {
        if (stmt.cmd?.type !== "FuncDecl" || stmt.background || stmt.negated) continue;
        const decl = stmt.cmd as FuncDecl;
        for (const def of this.#functions.get(decl.name) ?? []) {
          if (def.decl === decl) def.reliable = !this.#unset.has(decl.name);
        }
      }
      this.#ifsChanged ||= this.#assignments.has("IFS") || this.#anyAssigned;
      for (const [name, list] of this.#assignments) {
        if (Object.hasOwn(this.#state.env, name) && list.some((a) => a.persistent)) {
          this.#effects.names("env_write", [name]);
        }
      }
      if (this.#anyAssigned) this.#effects.names("env_write", ["*"]);
      this.#list(this.#file.stmts, [normalizePath(this.#state.cwd)]);
    } catch (error) {
      if (error instanceof BudgetExceeded || error instanceof RangeError) {
        this.#effects.opaque("analysis budget exceeded");
        return;
      }
      throw error;
    }
  }

  #tick(): void {
    if (++this.#steps > EFFECT_ANALYSIS_STEPS) throw new BudgetExceeded();
  }

  // ---- pre-pass: assignments and function definitions -------------------------------------

  #assign(name: string, offset: number, persistent: boolean): void {
    const list = this.#assignments.get(name) ?? [];
    list.push({ offset, persistent });
    this.#assignments.set(name, list);
  }

  /** Visits every node once, recording variable assignments, definitions and unsets. */
  #collect(node: unknown): void {
    if (Array.isArray(node)) {
      for (const item of node) this.#collect(item);
      return;
    }
    if (node === null || typeof node !== "object") return;
    this.#tick();
    const typed = node as { type?: string; span?: { start: number } };
    const offset = typed.span?.start ?? 0;
    switch (typed.type) {
      case "CallExpr": {
        const call = node as CallExpr;
        const standalone = call.args.length === 0;
        for (const assign of call.assigns) {
          if (assign.name !== null) this.#assign(assign.name, assign.span.start, standalone);
        }
        const assigned = commandAssignments(call.args);
        for (const { name, offset, persistent } of assigned.names) {
          this.#assign(name, offset, persistent);
          if (assigned.builtin === "unset") this.#unset.add(name);
        }
        if (assigned.unknown) this.#anyAssigned = true;
        break;
      }
      case "DeclClause": {
        const decl = node as DeclClause;
        const keeps = decl.variant !== "local";
        for (const arg of decl.args) {
          // A naked `declare NAME` keeps the value (inside a function it makes an unset local).
          if (arg.name !== null) this.#assign(arg.name, arg.span.start, keeps && !arg.naked);
        }
        break;
      }
      case "CoprocClause": {
        const coproc = node as { name: Word | null; span: { start: number } };
        const name = coproc.name === null ? "COPROC" : staticWord(coproc.name);
        if (name === null) this.#anyAssigned = true;
        else this.#assign(name, coproc.span.start, true);
        break;
      }
      case "WordIter": {
        const iter = node as { name: string; span: { start: number } };
        this.#assign(iter.name, iter.span.start, true);
        break;
      }
      case "ParamExp": {
        const exp = node as ParamExp;
        if (exp.exp !== null && (exp.exp.op === "=" || exp.exp.op === ":=")) {
          this.#assign(exp.param, offset, true);
        }
        break;
      }
      case "BinaryArithm":
      case "UnaryArithm": {
        const arith = node as { op: string; x: ArithmExpr };
        const assigning = typed.type === "UnaryArithm"
          ? arith.op === "++" || arith.op === "--"
          : /^([-+*/%&|^]|<<|>>)?=$/.test(arith.op);
        const target = arith.x.type === "Word" ? (arith.x as Word).lit : null;
        if (assigning && target !== null && IDENTIFIER.test(target)) {
          this.#assign(target, offset, true);
        }
        break;
      }
      case "Redirect": {
        const redirect = node as Redirect;
        const fdVar = redirect.n?.match(/^\{([A-Za-z_][A-Za-z0-9_]*)\}$/);
        if (fdVar) this.#assign(fdVar[1], offset, true);
        break;
      }
      case "FuncDecl": {
        const decl = node as FuncDecl;
        const defs = this.#functions.get(decl.name) ?? [];
        defs.push({ decl, reliable: false });
        this.#functions.set(decl.name, defs);
        break;
      }
    }
    for (const value of Object.values(node)) {
      if (value !== null && typeof value === "object") this.#collect(value);
    }
  }

  /** Whether `name` may hold a value the source assigned before a reference at `offset`. */
  #assignedBefore(name: string, offset: number): boolean {
    if (this.#anyAssigned) return true;
    const limit = Math.max(offset, this.#floor);
    return (this.#assignments.get(name) ?? []).some((a) => a.offset < limit);
  }

  // ---- statements -------------------------------------------------------------------------

  #list(stmts: readonly Stmt[], cwds: Cwds): Flow {
    let flow: Flow = { ok: cwds, fail: cwds };
    let current = cwds;
    for (const stmt of stmts) {
      flow = this.#stmt(stmt, current);
      current = union(flow.ok, flow.fail);
    }
    return flow;
  }

  #stmt(stmt: Stmt, cwds: Cwds): Flow {
    this.#tick();
    for (const redirect of stmt.redirs) this.#redirect(redirect, cwds);
    let flow: Flow = stmt.cmd === null ? { ok: cwds, fail: cwds } : this.#command(stmt.cmd, cwds);
    if (stmt.background) flow = { ok: cwds, fail: cwds };
    return stmt.negated ? { ok: flow.fail, fail: flow.ok } : flow;
  }

  #command(cmd: Command, cwds: Cwds): Flow {
    const same = { ok: cwds, fail: cwds };
    switch (cmd.type) {
      case "CallExpr":
        return this.#call(cmd as CallExpr, cwds);
      case "BinaryCmd": {
        const bin = cmd as Extract<Command, { type: "BinaryCmd" }>;
        if (bin.op === "&&") {
          const x = this.#stmt(bin.x, cwds);
          const y = this.#stmt(bin.y, x.ok);
          return { ok: y.ok, fail: union(x.fail, y.fail) };
        }
        if (bin.op === "||") {
          const x = this.#stmt(bin.x, cwds);
          const y = this.#stmt(bin.y, x.fail);
          return { ok: union(x.ok, y.ok), fail: y.fail };
        }
        // Each side of a pipeline runs in a subshell.
        this.#stmt(bin.x, cwds);
        this.#stmt(bin.y, cwds);
        return same;
      }
      case "Subshell":
        this.#list((cmd as Extract<Command, { type: "Subshell" }>).stmts, cwds);
        return same;
      case "Block":
        return this.#list((cmd as Extract<Command, { type: "Block" }>).stmts, cwds);
      case "IfClause":
        return this.#if(cmd as Extract<Command, { type: "IfClause" }>, cwds);
      case "WhileClause": {
        const loop = cmd as Extract<Command, { type: "WhileClause" }>;
        return this.#loop(loop.span.end, loop.cond, loop.do, loop.until, cwds);
      }
      case "ForClause": {
        const loop = cmd as Extract<Command, { type: "ForClause" }>;
        if (loop.loop.type === "WordIter") {
          for (const word of loop.loop.items) this.#word(word, cwds);
        } else {
          for (const expr of [loop.loop.init, loop.loop.cond, loop.loop.post]) {
            this.#arithm(expr, cwds);
          }
        }
        return this.#loop(loop.span.end, null, loop.do, false, cwds);
      }
      case "CaseClause": {
        const clause = cmd as Extract<Command, { type: "CaseClause" }>;
        this.#word(clause.word, cwds);
        let ok: Cwds = cwds;
        let fail: Cwds = cwds;
        for (const item of clause.items) {
          for (const pattern of item.patterns) this.#word(pattern, cwds);
          const flow = this.#list(item.stmts, cwds);
          ok = union(ok, flow.ok);
          fail = union(fail, flow.fail);
        }
        return { ok, fail };
      }
      case "FuncDecl": {
        const decl = cmd as FuncDecl;
        this.#effects.flag("session_write");
        this.#callFunction(decl, cwds);
        return same;
      }
      case "ArithmCmd":
        this.#arithm((cmd as Extract<Command, { type: "ArithmCmd" }>).x, cwds);
        return same;
      case "TestClause":
        this.#test((cmd as Extract<Command, { type: "TestClause" }>).x, cwds);
        return same;
      case "LetClause":
        for (const expr of (cmd as Extract<Command, { type: "LetClause" }>).exprs) {
          this.#arithm(expr, cwds);
        }
        return same;
      case "DeclClause":
        this.#decl(cmd as DeclClause, cwds);
        return same;
      case "TimeClause": {
        const inner = (cmd as Extract<Command, { type: "TimeClause" }>).stmt;
        return inner === null ? same : this.#stmt(inner, cwds);
      }
      case "CoprocClause": {
        const coproc = cmd as Extract<Command, { type: "CoprocClause" }>;
        if (coproc.name !== null) this.#word(coproc.name, cwds);
        this.#stmt(coproc.stmt, cwds);
        return same;
      }
      default:
        this.#effects.opaque(`unsupported construct: ${cmd.type}`);
        return { ok: null, fail: null };
    }
  }

  #if(clause: Extract<Command, { type: "IfClause" }>, cwds: Cwds): Flow {
    const cond = this.#list(clause.cond, cwds);
    const then = this.#list(clause.then, cond.ok);
    const rest = clause.else === null ? { ok: cond.fail, fail: cond.fail } : this.#if(
      clause.else,
      cond.fail,
    );
    return { ok: union(then.ok, rest.ok), fail: union(then.fail, rest.fail) };
  }

  #loop(
    end: number,
    cond: readonly Stmt[] | null,
    body: readonly Stmt[],
    until: boolean,
    cwds: Cwds,
  ): Flow {
    const floor = this.#floor;
    this.#floor = Math.max(floor, end);
    let current = cwds;
    try {
      for (let pass = 0;; pass++) {
        const test = cond === null ? { ok: current, fail: current } : this.#list(cond, current);
        const flow = this.#list(body, until ? test.fail : test.ok);
        const next = union(current, union(union(test.ok, test.fail), union(flow.ok, flow.fail)));
        if (sameCwds(next, current)) return { ok: next, fail: next };
        current = pass >= 2 ? null : next;
      }
    } finally {
      this.#floor = floor;
    }
  }

  #redirect(redirect: Redirect, cwds: Cwds): void {
    const op = redirect.op;
    if (op === "<<" || op === "<<-") {
      if (redirect.hdoc !== null) this.#word(redirect.hdoc, cwds);
      return;
    }
    const target = this.#word(redirect.word, cwds);
    if (op === "<<<") return;
    if (op === ">&" || op === "<&") {
      if (target.text !== null && /^(\d+-?|-)$/.test(target.text)) return;
      this.#path(op === ">&" ? "fs_write" : "fs_read", target, cwds, true);
      return;
    }
    if (op === "<" || op === "<>") this.#path("fs_read", target, cwds, true);
    if (op !== "<") this.#path("fs_write", target, cwds, true);
  }

  /** Records a path effect for a word, resolving it against every possible cwd. */
  #path(kind: FsKind, arg: ArgValue, cwds: Cwds, redirect = false): void {
    if (arg.text === null || !arg.single || globMayClimb(arg.text)) {
      this.#effects.opaque("dynamic path");
      return;
    }
    if (arg.text === "") return;
    let paths: string[];
    if (arg.text.startsWith("/")) {
      paths = [normalizePath(arg.text)];
    } else if (cwds === null) {
      this.#effects.opaque("unknown working directory");
      return;
    } else {
      paths = cwds.map((cwd) => resolvePath(cwd, arg.text!));
    }
    if (redirect) paths = paths.filter((path) => !isSpecialDevice(path));
    this.#effects.paths(kind, paths);
  }

  // ---- simple commands --------------------------------------------------------------------

  #call(call: CallExpr, cwds: Cwds): Flow {
    for (const assign of call.assigns) this.#assignValue(assign, cwds);
    const args = call.args.map((word) => this.#word(word, cwds));
    if (args.length === 0) return { ok: cwds, fail: cwds };
    const name = args[0].text;
    if (name === null || !args[0].single) {
      this.#effects.opaque("dynamic command name");
      return { ok: null, fail: null };
    }
    for (const assign of call.assigns) {
      if (assign.name !== null && DANGEROUS_OVERRIDE.test(assign.name)) {
        this.#effects.opaque(`environment override: ${assign.name}`);
      }
    }
    return this.#run(name, args.slice(1), call.span.start, cwds, false);
  }

  /** Effects of running command `name` with `args`; `plain` skips functions and aliases. */
  #run(name: string, args: ArgValue[], offset: number, cwds: Cwds, plain: boolean): Flow {
    const same = { ok: cwds, fail: cwds };
    if (!plain) {
      if (this.#aliases.has(name)) {
        this.#effects.opaque("alias");
        return { ok: null, fail: null };
      }
      if (this.#state.sessionCommands.has(name)) {
        this.#effects.opaque("session function");
        return { ok: null, fail: null };
      }
      const defs = this.#functions.get(name);
      if (defs !== undefined) {
        const before = defs.filter((def) => def.decl.span.start < offset);
        const last = before.at(-1);
        if (last?.reliable) return this.#callFunction(last.decl, cwds);
        for (const def of defs) this.#callFunction(def.decl, cwds);
      }
    }
    if (!name.includes("/")) {
      const builtin = this.#builtin(name, args, offset, cwds);
      if (builtin !== null) return builtin;
    }
    this.#effects.spawn(name);
    const base = name.slice(name.lastIndexOf("/") + 1);
    const handler = !name.includes("/") || SYSTEM_DIRS.some((dir) => name.startsWith(dir))
      ? knownCommand(base)
      : undefined;
    if (handler === undefined) {
      this.#effects.opaque(`unknown command: ${name}`);
      return same;
    }
    handler(args, this.#io(cwds));
    return same;
  }

  #io(cwds: Cwds): CommandIO {
    const effects = this.#effects;
    const cwdPaths = (kind: FsKind) => {
      if (cwds === null) effects.opaque("unknown working directory");
      else effects.paths(kind, cwds);
    };
    return {
      path: (kind, arg) => this.#path(kind, arg, cwds),
      cwd: cwdPaths,
      names: (kind, names) => effects.names(kind, names),
      flag: (kind) => effects.flag(kind),
      connect: (host, port) => effects.connect(host, port),
      opaque: (reason) => effects.opaque(reason),
    };
  }

  /** Builtin handling; null when `name` is not a builtin. */
  #builtin(name: string, args: ArgValue[], offset: number, cwds: Cwds): Flow | null {
    const same = { ok: cwds, fail: cwds };
    const effects = this.#effects;
    if (QUIET_BUILTINS.has(name)) return same;
    if (OPAQUE_BUILTINS.has(name)) {
      effects.opaque(name);
      return same;
    }
    switch (name) {
      case "cd":
      case "pushd":
      case "popd":
        effects.flag("session_write");
        return this.#cd(name, args, cwds);
      case "alias":
        effects.flag("session_write");
        for (const arg of args) {
          if (arg.text === null) effects.opaque("dynamic alias");
          else if (arg.text.includes("=")) {
            this.#aliases.add(arg.text.slice(0, arg.text.indexOf("=")));
          }
        }
        return same;
      case "unalias":
        effects.flag("session_write");
        return same;
      case "mapfile":
      case "readarray":
        // `-C callback` evaluates a command.
        if (args.some((arg) => arg.text === null || /^-[^-]*C/.test(arg.text))) {
          effects.opaque(`${name} callback`);
        }
        return same;
      case "set":
        if (args.length === 0) effects.names("env_read", ["*"]);
        return same;
      case "trap":
        if (!harmlessTrap(args)) effects.opaque("trap action");
        return same;
      case "unset":
        this.#unsetNames(args);
        return same;
      case "export":
      case "declare":
      case "typeset":
      case "readonly":
        this.#declaration(name, args);
        return same;
      case "command": {
        let i = 0;
        while (i < args.length && args[i].text === "-p") i++;
        if (i >= args.length) return same;
        const first = args[i];
        if (first.text === "-v" || first.text === "-V") return same;
        if (first.text === null || !first.single) {
          effects.opaque("dynamic command name");
          return { ok: null, fail: null };
        }
        return this.#run(first.text, args.slice(i + 1), offset, cwds, true);
      }
    }
    if (BASH_BUILTINS.has(name)) {
      effects.opaque(`builtin: ${name}`);
      return same;
    }
    return null;
  }

  #cd(name: string, args: ArgValue[], cwds: Cwds): Flow {
    const operands = args.filter((arg) => arg.text === null || !/^-[LPe@]+$/.test(arg.text));
    if (name === "popd" || (name === "pushd" && operands.length === 0)) {
      return { ok: null, fail: cwds };
    }
    let target: ArgValue | undefined = operands[0];
    if (target === undefined) {
      const home = this.#state.home;
      if (home === undefined || this.#assignedBefore("HOME", Infinity)) {
        return { ok: null, fail: cwds };
      }
      target = { text: home, single: true, prefix: home };
    }
    if (target.text === null || !target.single) {
      this.#effects.opaque("dynamic path");
      return { ok: null, fail: cwds };
    }
    const text = target.text;
    // A glob picks a directory only when it runs.
    if (/[*?[]|[@!+]\(/.test(text)) return { ok: null, fail: cwds };
    if (text === "-" || /^[+-]\d+$/.test(text)) return { ok: null, fail: cwds };
    const cdpath = this.#state.env.CDPATH;
    if (!text.startsWith("/") && !/^\.\.?(\/|$)/.test(text) && cdpath) {
      return { ok: null, fail: cwds };
    }
    if (text.startsWith("/")) return { ok: [normalizePath(text)], fail: cwds };
    if (cwds === null) return { ok: null, fail: null };
    return { ok: unique(cwds.map((cwd) => resolvePath(cwd, text))), fail: cwds };
  }

  #unsetNames(args: ArgValue[]): void {
    let functions = false;
    for (const arg of args) {
      if (arg.text === null || !arg.single) {
        this.#effects.opaque("dynamic variable name");
      } else if (arg.text.startsWith("-")) {
        if (arg.text.includes("f")) functions = true;
      } else if (functions) {
        this.#effects.flag("session_write");
      } else {
        this.#effects.names("env_write", [arg.text]);
      }
    }
  }

  /** `export`/`declare`/… given as plain words (e.g. through `command`). */
  #declaration(variant: string, args: ArgValue[]): void {
    let flags = "";
    const names: string[] = [];
    for (const arg of args) {
      if (arg.text === null || !arg.single) {
        this.#effects.opaque("dynamic variable name");
        return;
      }
      if (/^[-+]/.test(arg.text)) flags += arg.text;
      else names.push(arg.text.split("=")[0].replace(/\[.*$/, "").replace(/\+$/, ""));
    }
    this.#declEffects(variant, flags, names);
  }

  #decl(decl: DeclClause, cwds: Cwds): void {
    let flags = "";
    const names: string[] = [];
    for (const arg of decl.args) {
      if (arg.name !== null) {
        names.push(arg.name);
        this.#assignValue(arg, cwds);
        continue;
      }
      if (arg.value === null) continue;
      const value = this.#word(arg.value, cwds);
      if (value.text === null || !value.single) {
        this.#effects.opaque("dynamic variable name");
        return;
      }
      if (/^[-+]/.test(value.text)) flags += value.text;
      else names.push(value.text);
    }
    this.#declEffects(decl.variant, flags, names);
  }

  #declEffects(variant: string, flags: string, names: string[]): void {
    const effects = this.#effects;
    // A nameref turns later assignments to one name into writes of another (`export -n` un-exports).
    if (variant !== "export" && flags.includes("n")) effects.opaque("nameref");
    const functions = /[fF]/.test(flags);
    if (names.length === 0) {
      // Listing forms print variables with their values.
      if (!functions && (variant === "export" || variant === "declare" || variant === "typeset")) {
        effects.names("env_read", ["*"]);
      }
      return;
    }
    if (variant === "export" || flags.includes("x")) {
      effects.names("env_write", names);
    } else if (flags.includes("p")) {
      effects.names("env_read", names.filter((name) => Object.hasOwn(this.#state.env, name)));
    }
  }

  #assignValue(assign: Assign, cwds: Cwds): void {
    this.#arithm(assign.index, cwds);
    if (assign.value !== null) this.#word(assign.value, cwds);
    for (const elem of assign.array?.elems ?? []) {
      this.#arithm(elem.index, cwds);
      if (elem.value !== null) this.#word(elem.value, cwds);
    }
  }

  // ---- functions --------------------------------------------------------------------------

  #callFunction(decl: FuncDecl, cwds: Cwds): Flow {
    const key = `${decl.span.start}\0${cwds === null ? "?" : cwds.join("\0")}`;
    const known = this.#memo.get(key);
    if (known !== undefined) return known;
    if (this.#active.has(key)) return { ok: null, fail: null };
    this.#active.add(key);
    const floor = this.#floor;
    this.#floor = Infinity;
    try {
      const flow = this.#stmt(decl.body, cwds);
      this.#memo.set(key, flow);
      return flow;
    } finally {
      this.#floor = floor;
      this.#active.delete(key);
    }
  }

  // ---- words ------------------------------------------------------------------------------

  /** Static value of a word, recording the effects of its substitutions. */
  #word(word: Word, cwds: Cwds): ArgValue {
    this.#tick();
    const acc: WordAcc = { text: "", dynamic: false, single: true, prefix: "" };
    word.parts.forEach((part, index) => this.#part(part, false, index === 0, acc, cwds));
    // `{a,b}` and `{1..3}` become several words before anything else is expanded.
    if (hasBraceExpansion(word)) dynamic(acc, false);
    return { text: acc.dynamic ? null : acc.text, single: acc.single, prefix: acc.prefix };
  }

  #part(part: WordPart, quoted: boolean, first: boolean, acc: WordAcc, cwds: Cwds): void {
    switch (part.type) {
      case "Lit": {
        let value = (part as Extract<WordPart, { type: "Lit" }>).value;
        if (quoted) {
          append(acc, value.replace(/\\([$`"\\\n])/g, "$1"));
          return;
        }
        if (first && value.startsWith("~")) {
          const slash = value.indexOf("/");
          const user = slash < 0 ? value.slice(1) : value.slice(1, slash);
          const home = this.#state.home;
          if (user !== "" || home === undefined || this.#assignedBefore("HOME", part.span.start)) {
            dynamic(acc, true);
            return;
          }
          value = home + (slash < 0 ? "" : value.slice(slash));
          append(acc, value);
          return;
        }
        append(acc, value.replace(/\\(.)/gs, "$1"));
        return;
      }
      case "SglQuoted": {
        const sgl = part as Extract<WordPart, { type: "SglQuoted" }>;
        const value = sgl.dollar ? decodeAnsiC(sgl.value) : sgl.value;
        if (value === null) dynamic(acc, true);
        else append(acc, value);
        return;
      }
      case "DblQuoted": {
        const dbl = part as Extract<WordPart, { type: "DblQuoted" }>;
        for (const inner of dbl.parts) this.#part(inner, true, false, acc, cwds);
        return;
      }
      case "ParamExp":
        this.#param(part as ParamExp, quoted, acc, cwds);
        return;
      case "CmdSubst":
        this.#list((part as Extract<WordPart, { type: "CmdSubst" }>).stmts, cwds);
        dynamic(acc, quoted);
        return;
      case "ProcSubst":
        this.#list((part as Extract<WordPart, { type: "ProcSubst" }>).stmts, cwds);
        // It becomes a /dev/fd/N path: one field that cannot start with `-`.
        append(acc, "/dev/fd/");
        dynamic(acc, true);
        return;
      case "ArithmExp":
        this.#arithm((part as Extract<WordPart, { type: "ArithmExp" }>).x, cwds);
        dynamic(acc, quoted);
        return;
      case "ExtGlob": {
        const glob = part as Extract<WordPart, { type: "ExtGlob" }>;
        append(acc, `${glob.op}${glob.pattern})`);
        return;
      }
      default:
        dynamic(acc, false);
    }
  }

  #param(exp: ParamExp, quoted: boolean, acc: WordAcc, cwds: Cwds): void {
    const name = exp.param;
    const env = this.#state.env;
    const fromEnv = IDENTIFIER.test(name) && Object.hasOwn(env, name) && !BASH_MANAGED.test(name) &&
      !this.#assignedBefore(name, exp.span.start);
    const simple = !exp.excl && !exp.length && !exp.width && exp.index === null &&
      exp.slice === null && exp.repl === null && exp.names === null && exp.exp === null;
    this.#arithm(exp.index, cwds);
    this.#arithm(exp.slice?.offset ?? null, cwds);
    this.#arithm(exp.slice?.length ?? null, cwds);
    for (const word of [exp.repl?.orig, exp.repl?.with, exp.exp?.word]) {
      if (word) this.#word(word, cwds);
    }
    if (exp.excl && exp.index === null && exp.names === null) {
      this.#effects.names("env_read", ["*"]);
    } else if (fromEnv) {
      this.#effects.names("env_read", [name]);
    }
    if (simple && fromEnv) {
      const value = env[name];
      if (quoted) {
        append(acc, value);
        return;
      }
      if (!this.#ifsChanged && value !== "" && !/[ \t\n]/.test(value)) {
        append(acc, value);
        return;
      }
    }
    dynamic(acc, quoted);
  }

  #arithm(expr: ArithmExpr | null, cwds: Cwds): void {
    if (expr === null) return;
    this.#tick();
    switch (expr.type) {
      case "Word": {
        const word = expr as Word;
        const name = word.lit;
        if (name !== null && IDENTIFIER.test(name) && Object.hasOwn(this.#state.env, name)) {
          if (!this.#assignedBefore(name, word.span.start)) {
            this.#effects.names("env_read", [name]);
            // bash evaluates the value as arithmetic too: `a[$(cmd)]` in it would run cmd.
            if (/[`$[]/.test(this.#state.env[name])) this.#effects.opaque("arithmetic on variable");
          }
        }
        this.#word(word, cwds);
        return;
      }
      case "BinaryArithm": {
        const bin = expr as Extract<ArithmExpr, { type: "BinaryArithm" }>;
        this.#arithm(bin.x, cwds);
        this.#arithm(bin.y, cwds);
        return;
      }
      case "UnaryArithm":
      case "ParenArithm":
        this.#arithm((expr as { x: ArithmExpr }).x, cwds);
        return;
    }
  }

  #test(expr: TestExpr, cwds: Cwds): void {
    this.#tick();
    switch (expr.type) {
      case "Word":
        this.#word(expr as Word, cwds);
        return;
      case "BinaryTest": {
        const bin = expr as Extract<TestExpr, { type: "BinaryTest" }>;
        this.#test(bin.x, cwds);
        this.#test(bin.y, cwds);
        return;
      }
      case "UnaryTest":
      case "ParenTest":
        this.#test((expr as { x: TestExpr }).x, cwds);
        return;
    }
  }
}

interface WordAcc {
  text: string;
  dynamic: boolean;
  single: boolean;
  /** Static text before the first dynamic part. */
  prefix: string;
}

function append(acc: WordAcc, text: string): void {
  if (!acc.dynamic) acc.prefix += text;
  acc.text += text;
}

/** Marks the word dynamic; `oneField` when the expansion cannot split into several words. */
function dynamic(acc: WordAcc, oneField: boolean): void {
  acc.dynamic = true;
  if (!oneField) acc.single = false;
}

function union(a: Cwds, b: Cwds): Cwds {
  if (a === null || b === null) return null;
  if (a === b) return a;
  return unique([...a, ...b]);
}

function unique(list: readonly string[]): string[] {
  return [...new Set(list)].sort();
}

function sameCwds(a: Cwds, b: Cwds): boolean {
  if (a === null || b === null) return a === b;
  return a.length === b.length && a.every((value, i) => value === b[i]);
}

/** Redirection targets that touch no file (K-EFF-3). */
function isSpecialDevice(path: string): boolean {
  return ["/dev/null", "/dev/stdout", "/dev/stderr", "/dev/stdin", "/dev/tty"].includes(path) ||
    path.startsWith("/dev/fd/");
}

/** `trap` forms that install no command: listing, resetting, ignoring. */
function harmlessTrap(args: ArgValue[]): boolean {
  const words = args.filter((arg) => arg.text !== "--");
  if (words.length === 0) return true;
  const first = words[0].text;
  if (first === "-l" || first === "-p" || first === "-" || first === "") return true;
  // `trap SIGNAL` alone resets it.
  return words.length === 1 && first !== null && /^(SIG)?[A-Z0-9+-]+$/.test(first);
}
