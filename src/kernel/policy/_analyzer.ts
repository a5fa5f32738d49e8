/**
 * Walks the shoal bash AST and records effects (K-EFF-3). It tracks the set of directories the
 * shell may be in (so `cd d && rm x` deletes `d/x`), which variables the source assigns (so only
 * untouched exported variables are substituted), and functions defined in the same source.
 */
import type {
  Assign,
  CallExpr,
  Command,
  DeclClause,
  File,
  FuncDecl,
  Redirect,
  Stmt,
} from "../bash/ast.ts";
import type { EffectSet } from "./_effect_set.ts";
import type { EffectState } from "./effect_types.ts";
import { normalizePath, resolvePath } from "../bash/lexical_path.ts";
import type { ArgValue, CommandIO } from "./commands/command_io.ts";
import { knownCommand } from "./commands/table.ts";
import { type Cwds, type Flow, sameCwds, union, unique } from "./_cwds.ts";
import {
  BASH_BUILTINS,
  CONFIG_VARIABLE,
  DANGEROUS_OVERRIDE,
  harmlessTrap,
  leadingKeyword,
  LOADER_VARIABLE,
  OPAQUE_BUILTINS,
  QUIET_BUILTINS,
} from "./_shell_tables.ts";
import { jobsReason, setReason, shoptReason, subscriptReason } from "./_builtin_options.ts";
import { PathRecorder } from "./_path_recorder.ts";
import { BudgetExceeded, StepBudget } from "./_step_budget.ts";
import { SourceScan } from "./_source_scan.ts";
import { WordExpander } from "./_words.ts";
import { continuationReason } from "./_continuations.ts";

/** One effect derivation over one AST. */
export class Analyzer {
  readonly #file: File;
  readonly #state: EffectState;
  readonly #effects: EffectSet;
  readonly #budget = new StepBudget();
  readonly #scan = new SourceScan(this.#budget);
  readonly #words: WordExpander;
  readonly #memo = new Map<string, Flow>();
  readonly #active = new Set<string>();
  /** Alias names the source defines; later calls to them are opaque. */
  readonly #aliases = new Set<string>();
  readonly #paths: PathRecorder;
  /** Why an assignment in the source changes how commands run (PATH, aliases, HOME …). */
  #configReason: string | null = null;
  /** Whether the source runs a program, which an assignment could affect. */
  #commandRuns = false;
  /** Whether the source has a compound command or declaration an alias could replace. */
  #keywordRuns = false;

  constructor(file: File, state: EffectState, effects: EffectSet, lookups: number) {
    this.#file = file;
    this.#state = state;
    this.#effects = effects;
    this.#paths = new PathRecorder(state, effects, lookups);
    this.#words = new WordExpander(
      state,
      effects,
      this.#scan,
      this.#budget,
      (stmts, cwds) => this.#list(stmts, cwds),
    );
  }

  /** Derives the effects of the whole file, parsed from `src`, into the effect set. */
  run(src: string): void {
    try {
      const vars = this.#state.vars ?? {};
      const ifs = Object.hasOwn(this.#state.env, "IFS") || Object.hasOwn(vars, "IFS");
      this.#scan.scan(this.#file, ifs);
      const continuation = continuationReason(src, this.#scan.heredocs, this.#file);
      if (continuation !== null) this.#effects.opaque(continuation);
      for (const [name, list] of this.#scan.assignments) {
        if (Object.hasOwn(this.#state.env, name) && list.some((a) => a.persistent)) {
          this.#effects.names("env_write", [name]);
        }
        if (CONFIG_VARIABLE.test(name)) this.#configReason ??= `assigns ${name}`;
        const integer = this.#scan.integerNames.has(name) ||
          /^declare -[a-zA-Z]*i/.test(vars[name] ?? "");
        if (integer && list.some((a) => !a.numeric)) {
          this.#effects.opaque(`assigns data to integer variable ${name}`);
        }
      }
      if (this.#scan.anyAssigned) {
        // bash evaluates a subscript in such a name: `read "$k"` with k='a[$(cmd)]' runs cmd.
        this.#effects.opaque("assigns a variable named by data");
        this.#effects.names("env_write", ["*"]);
        this.#configReason ??= "assigns a variable named by data";
      }
      this.#list(this.#file.stmts, this.#state.cwdLossy ? null : [normalizePath(this.#state.cwd)]);
      // Such an assignment changes what every later command is or reads (issue 14).
      const aliases = [...this.#scan.assignments.keys()].find((name) => name === "BASH_ALIASES");
      if (this.#commandRuns && this.#configReason !== null) {
        this.#effects.opaque(this.#configReason);
      } else if (this.#keywordRuns && aliases !== undefined) {
        this.#effects.opaque(`assigns ${aliases}`);
      }
      const reason = this.#paths.finish();
      if (reason !== null) this.#effects.opaque(reason);
    } catch (error) {
      if (error instanceof BudgetExceeded || error instanceof RangeError) {
        this.#effects.opaque("analysis budget exceeded");
        return;
      }
      throw error;
    }
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
    this.#budget.tick();
    const keyword = stmt.cmd === null ? null : leadingKeyword(stmt.cmd);
    if (keyword !== null) this.#keywordRuns = true;
    if (
      keyword !== null && (this.#aliases.has(keyword) || this.#state.sessionCommands.has(keyword))
    ) {
      this.#effects.opaque(`alias or function named ${keyword}`);
    }
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
          for (const word of loop.loop.items) this.#words.word(word, cwds);
        } else {
          for (const expr of [loop.loop.init, loop.loop.cond, loop.loop.post]) {
            this.#words.arithm(expr, cwds);
          }
        }
        return this.#loop(loop.span.end, null, loop.do, false, cwds);
      }
      case "CaseClause": {
        const clause = cmd as Extract<Command, { type: "CaseClause" }>;
        this.#words.word(clause.word, cwds);
        let ok: Cwds = cwds;
        let fail: Cwds = cwds;
        for (const item of clause.items) {
          for (const pattern of item.patterns) this.#words.word(pattern, cwds);
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
        this.#words.arithm((cmd as Extract<Command, { type: "ArithmCmd" }>).x, cwds);
        return same;
      case "TestClause":
        this.#words.test((cmd as Extract<Command, { type: "TestClause" }>).x, cwds);
        return same;
      case "LetClause":
        for (const expr of (cmd as Extract<Command, { type: "LetClause" }>).exprs) {
          this.#words.arithm(expr, cwds);
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
        if (coproc.name !== null) this.#words.word(coproc.name, cwds);
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
    const floor = this.#scan.floor;
    this.#scan.floor = Math.max(floor, end);
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
      this.#scan.floor = floor;
    }
  }

  #redirect(redirect: Redirect, cwds: Cwds): void {
    const op = redirect.op;
    if (op === "<<" || op === "<<-") {
      if (redirect.hdoc !== null) this.#words.word(redirect.hdoc, cwds);
      return;
    }
    const target = this.#words.word(redirect.word, cwds);
    if (op !== "<<<") this.#paths.redirect(op, redirect.n, target, cwds);
  }

  // ---- simple commands --------------------------------------------------------------------

  #call(call: CallExpr, cwds: Cwds): Flow {
    for (const assign of call.assigns) this.#assignValue(assign, cwds);
    const args = call.args.map((word) => this.#words.word(word, cwds));
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
      const defs = this.#scan.functions.get(name);
      if (defs !== undefined) {
        const before = defs.filter((def) => def.decl.span.start < offset);
        const last = before.at(-1);
        if (last?.reliable) return this.#callFunction(last.decl, cwds);
        for (const def of defs) this.#callFunction(def.decl, cwds);
      }
    }
    if (!name.includes("/")) {
      const subscript = subscriptReason(name, args);
      if (subscript !== null) this.#effects.opaque(subscript);
      const builtin = this.#builtin(name, args, offset, cwds);
      if (builtin !== null) return builtin;
    }
    this.#effects.spawn(name);
    this.#commandRuns = true;
    const env = this.#state.env;
    const changed = this.#state.changedEnv;
    const loader = Object.keys(env).find((key) => LOADER_VARIABLE.test(key) && changed.has(key));
    if (loader !== undefined) {
      this.#effects.opaque(`session environment sets ${loader}`);
      return same;
    }
    const platform = this.#state.platform ?? Deno.build.os;
    const cwd = this.#state.cwdLossy ? null : this.#state.cwd;
    const resolution = this.#paths.program(name, env.PATH, cwd, platform);
    // A program bash cannot find runs the handler, judged where it was defined if at all.
    const handler = "command_not_found_handle";
    if (
      !resolution.found &&
      (this.#state.sessionCommands.has(handler) || this.#scan.functions.has(handler))
    ) {
      this.#effects.opaque(`${name} not found: runs ${handler}`);
      return same;
    }
    const base = name.slice(name.lastIndexOf("/") + 1);
    const known = knownCommand(base, platform);
    const reason = known === undefined
      ? `unknown command: ${name}`
      : resolution.system !== true
      ? resolution.system
      : this.#paths.toolConfigured(base);
    if (known === undefined || reason !== null) {
      this.#effects.opaque(reason ?? `unknown command: ${name}`);
      return same;
    }
    known(args, this.#io(cwds));
    return same;
  }

  #io(cwds: Cwds): CommandIO {
    const [effects, paths] = [this.#effects, this.#paths];
    return {
      path: (kind, arg) => paths.path(kind, arg, cwds),
      output: (arg) => paths.path("fs_write", arg, cwds, "output"),
      replaced: (arg) => paths.path("fs_write", arg, cwds, "replace"),
      cwd: (kind) => paths.cwd(kind, cwds),
      names: (kind, names) => effects.names(kind, names),
      flag: (kind) => effects.flag(kind),
      connect: (host, port) => effects.connect(host, port),
      opaque: (reason) => effects.opaque(reason),
      link: (dest, sources, copy) => paths.link(dest, sources, cwds, copy),
      followedTree: (root) => paths.followedTree(root, cwds),
      homePath: (kind, name) => paths.homePath(kind, name, cwds),
      parents: (arg) => paths.parents(arg, cwds),
      gitTree: (kind, dir) => paths.gitTree(kind, dir, cwds),
      repository: (dir, hooks) => paths.repository(dir, hooks, cwds),
      gitConfig: (dir, scope, keys) => paths.gitConfig(dir, scope, cwds, keys),
      gitRemotes: (dir) => paths.gitRemotes(dir, cwds),
      gitWorkTree: (dir) => paths.gitWorkTree(dir, cwds),
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
      case "set": {
        if (args.length === 0) effects.names("env_read", ["*"]);
        const reason = setReason(args);
        if (reason !== null) effects.opaque(reason);
        return same;
      }
      case "shopt":
      case "jobs": {
        const reason = name === "shopt" ? shoptReason(args) : jobsReason(args);
        if (reason !== null) effects.opaque(reason);
        return same;
      }
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
    // Options end at `--` or the first other word (`cd -- /etc` enters /etc).
    const end = args.findIndex((arg) => arg.text === null || !/^-[LPe@]+$/.test(arg.text));
    const operands = end < 0 ? [] : args.slice(args[end].text === "--" ? end + 1 : end);
    if (name === "popd" || (name === "pushd" && operands.length === 0)) {
      return { ok: null, fail: cwds };
    }
    let target: ArgValue | undefined = operands[0];
    if (target === undefined) {
      const home = this.#state.home;
      if (home === undefined || this.#scan.assignedBefore("HOME", Infinity)) {
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
    const cdpath = this.#scan.assignments.has("CDPATH")
      ? "?"
      : this.#state.env.CDPATH ?? this.#state.vars?.CDPATH;
    // `cd -P` resolves `..` physically, which the cwd model does lexically.
    if (args.some((arg) => /^-[LPe@]*P/.test(arg.text ?? "")) && text.split("/").includes("..")) {
      return { ok: null, fail: cwds };
    }
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
      const value = this.#words.word(arg.value, cwds);
      if (value.text === null || !value.single) {
        this.#effects.opaque("dynamic variable name");
        return;
      }
      if (/^[-+]/.test(value.text)) flags += value.text;
      else names.push(value.text);
      const subscript = subscriptReason(decl.variant, [value]);
      if (subscript !== null) this.#effects.opaque(subscript);
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
    this.#words.arithm(assign.index, cwds);
    if (assign.value !== null) this.#words.word(assign.value, cwds);
    for (const elem of assign.array?.elems ?? []) {
      this.#words.arithm(elem.index, cwds);
      if (elem.value !== null) this.#words.word(elem.value, cwds);
    }
  }

  // ---- functions --------------------------------------------------------------------------

  #callFunction(decl: FuncDecl, cwds: Cwds): Flow {
    const key = `${decl.span.start}\0${cwds === null ? "?" : cwds.join("\0")}`;
    const known = this.#memo.get(key);
    if (known !== undefined) return known;
    if (this.#active.has(key)) return { ok: null, fail: null };
    this.#active.add(key);
    const floor = this.#scan.floor;
    this.#scan.floor = Infinity;
    try {
      const flow = this.#stmt(decl.body, cwds);
      this.#memo.set(key, flow);
      return flow;
    } finally {
      this.#scan.floor = floor;
      this.#active.delete(key);
    }
  }
}
