/**
 * Static expansion of words, arithmetic and test expressions (K-EFF-3): the value a word has when
 * it can be known, the environment it reads, and the commands its substitutions run.
 */
import type { ArithmExpr, ParamExp, Stmt, TestExpr, Word, WordPart } from "../bash/ast.ts";
import type { EffectState } from "./effect_types.ts";
import type { EffectSet } from "./_effect_set.ts";
import type { ArgValue } from "./commands/command_io.ts";
import type { Cwds } from "./_cwds.ts";
import type { SourceScan } from "./_source_scan.ts";
import type { StepBudget } from "./_step_budget.ts";
import { decodeAnsiC, hasBraceExpansion } from "./_assigned_names.ts";
import { BASH_MANAGED, IDENTIFIER } from "./_shell_tables.ts";

/** Runs the statements of a command or process substitution. */
export type ListRunner = (stmts: readonly Stmt[], cwds: Cwds) => void;

/** Expands words for one effect derivation, recording what the expansions do. */
export class WordExpander {
  readonly #state: EffectState;
  readonly #effects: EffectSet;
  readonly #scan: SourceScan;
  readonly #budget: StepBudget;
  readonly #runList: ListRunner;

  constructor(
    state: EffectState,
    effects: EffectSet,
    scan: SourceScan,
    budget: StepBudget,
    runList: ListRunner,
  ) {
    this.#state = state;
    this.#effects = effects;
    this.#scan = scan;
    this.#budget = budget;
    this.#runList = runList;
  }

  /** Static value of a word, recording the effects of its substitutions. */
  word(word: Word, cwds: Cwds): ArgValue {
    this.#budget.tick();
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
          if (
            user !== "" || home === undefined || this.#scan.assignedBefore("HOME", part.span.start)
          ) {
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
        this.#runList((part as Extract<WordPart, { type: "CmdSubst" }>).stmts, cwds);
        dynamic(acc, quoted);
        return;
      case "ProcSubst":
        this.#runList((part as Extract<WordPart, { type: "ProcSubst" }>).stmts, cwds);
        // It becomes a /dev/fd/N path: one field that cannot start with `-`.
        append(acc, "/dev/fd/");
        dynamic(acc, true);
        return;
      case "ArithmExp":
        this.arithm((part as Extract<WordPart, { type: "ArithmExp" }>).x, cwds);
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
      !this.#scan.assignedBefore(name, exp.span.start);
    const simple = !exp.excl && !exp.length && !exp.width && exp.index === null &&
      exp.slice === null && exp.repl === null && exp.names === null && exp.exp === null;
    this.arithm(exp.index, cwds);
    this.arithm(exp.slice?.offset ?? null, cwds);
    this.arithm(exp.slice?.length ?? null, cwds);
    for (const word of [exp.repl?.orig, exp.repl?.with, exp.exp?.word]) {
      if (word) this.word(word, cwds);
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
      if (!this.#scan.ifsChanged && value !== "" && !/[ \t\n]/.test(value)) {
        append(acc, value);
        return;
      }
    }
    dynamic(acc, quoted);
  }

  /** Records the effects of an arithmetic expression. */
  arithm(expr: ArithmExpr | null, cwds: Cwds): void {
    if (expr === null) return;
    this.#budget.tick();
    switch (expr.type) {
      case "Word": {
        const word = expr as Word;
        const name = word.lit;
        if (name !== null && IDENTIFIER.test(name) && Object.hasOwn(this.#state.env, name)) {
          if (!this.#scan.assignedBefore(name, word.span.start)) {
            this.#effects.names("env_read", [name]);
            // bash evaluates the value as arithmetic too: `a[$(cmd)]` in it would run cmd.
            if (/[`$[]/.test(this.#state.env[name])) this.#effects.opaque("arithmetic on variable");
          }
        }
        this.word(word, cwds);
        return;
      }
      case "BinaryArithm": {
        const bin = expr as Extract<ArithmExpr, { type: "BinaryArithm" }>;
        this.arithm(bin.x, cwds);
        this.arithm(bin.y, cwds);
        return;
      }
      case "UnaryArithm":
      case "ParenArithm":
        this.arithm((expr as { x: ArithmExpr }).x, cwds);
        return;
    }
  }

  /** Records the effects of a `[[ ]]` expression. */
  test(expr: TestExpr, cwds: Cwds): void {
    this.#budget.tick();
    switch (expr.type) {
      case "Word":
        this.word(expr as Word, cwds);
        return;
      case "BinaryTest": {
        const bin = expr as Extract<TestExpr, { type: "BinaryTest" }>;
        this.test(bin.x, cwds);
        this.test(bin.y, cwds);
        return;
      }
      case "UnaryTest":
      case "ParenTest":
        this.test((expr as { x: TestExpr }).x, cwds);
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
