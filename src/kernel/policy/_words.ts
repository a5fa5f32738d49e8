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
import { hasBraceExpansion, staticWord } from "./_assigned_names.ts";
import { decodeAnsiC } from "../bash/quote.ts";
import { NUMBER } from "./_source_scan.ts";
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
        if (dbl.dollar) {
          // `$"…"` is translated through the message catalog TEXTDOMAIN, TEXTDOMAINDIR and
          // LANGUAGE name: any text (`rm -rf $"build"` removed what a planted catalog said)
          for (const inner of dbl.parts) this.#part(inner, true, false, { ...acc }, cwds);
          dynamic(acc, true);
          return;
        }
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
    // `${x@P}` expands the value as a prompt, running the command substitutions it holds.
    const operator = exp.exp?.op === "@" ? exp.exp.word?.lit ?? "" : null;
    if (operator !== null && !/^[QEAKakULu]$/.test(operator)) {
      this.#effects.opaque(
        operator === "P" ? "prompt expansion" : `expansion operator @${operator}`,
      );
    }
    if (exp.excl && exp.index === null && exp.names === null) {
      // `${!ref}` expands the variable ref names, and evaluates a subscript in that name.
      this.#effects.opaque("indirect expansion");
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
    // `$?`, `$#` and `$$` are never empty and hold only digits: one field unless IFS changed.
    dynamic(acc, quoted || (simple && /^[?#$]$/.test(name) && !this.#scan.ifsChanged));
  }

  /** Records the effects of an arithmetic expression. */
  arithm(expr: ArithmExpr | null, cwds: Cwds): void {
    if (expr === null) return;
    this.#budget.tick();
    switch (expr.type) {
      case "Word": {
        const word = expr as Word;
        const name = word.lit;
        this.#arithmOperand(word);
        if (name !== null && IDENTIFIER.test(name) && Object.hasOwn(this.#state.env, name)) {
          if (!this.#scan.assignedBefore(name, word.span.start)) {
            this.#effects.names("env_read", [name]);
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
        if (ARITHMETIC_TESTS.has(bin.op)) {
          for (const side of [bin.x, bin.y]) {
            if (side.type === "Word") this.#arithmOperand(side as Word);
            else this.#effects.opaque("arithmetic on a value the analysis cannot see");
          }
        }
        this.test(bin.x, cwds);
        this.test(bin.y, cwds);
        return;
      }
      case "UnaryTest":
      case "ParenTest": {
        const inner = (expr as { x: TestExpr }).x;
        if ((expr as { op?: string }).op === "-v") this.#checkVariableName(inner);
        this.test(inner, cwds);
        return;
      }
    }
  }

  /** `[[ -v NAME[SUB] ]]` evaluates SUB: only a plain name or a literal index is followed. */
  #checkVariableName(expr: TestExpr): void {
    const text = expr.type === "Word" ? staticWord(expr as Word) : null;
    if (text === null || !VARIABLE_REFERENCE.test(text)) {
      this.#effects.opaque("subscript evaluated from data");
    }
  }

  /**
   * Arithmetic evaluates the value of every variable it reads as an expression again, so
   * `a='x[$(cmd)]'; (( a ))` runs cmd: an operand is exact only when it is a number or a
   * variable whose every possible value is one.
   */
  #arithmOperand(word: Word): void {
    const lit = word.lit;
    if (lit !== null) {
      if (lit === "" || NUMBER.test(lit) || lit === "@" || lit === "*") return;
      if (IDENTIFIER.test(lit) && this.numericVariable(lit)) return;
    } else if (word.parts.length === 1) {
      const part = word.parts[0];
      if (part.type === "ArithmExp") return;
      if (part.type === "ParamExp") {
        const exp = part as ParamExp;
        if (exp.length && exp.index === null) return;
        const plain = !exp.excl && !exp.width && exp.slice === null && exp.repl === null &&
          exp.names === null && exp.exp === null;
        if (plain && this.numericVariable(exp.param)) return;
      }
    }
    this.#effects.opaque("arithmetic on a value the analysis cannot see");
  }

  /** Whether every value `name` may hold (session, environment, this source) is an integer. */
  numericVariable(name: string): boolean {
    const assignments = this.#scan.assignments.get(name) ?? [];
    if (this.#scan.anyAssigned || assignments.some((a) => !a.numeric)) return false;
    if (NUMERIC_SPECIAL.test(name)) return true;
    const env = this.#state.env[name];
    if (env !== undefined && env !== "" && !NUMBER.test(env)) return false;
    const declared = this.#state.vars?.[name];
    return declared === undefined || NUMERIC_DECLARATION.test(declared);
  }
}

/** `[[ ]]` operators that evaluate both operands as arithmetic. */
const ARITHMETIC_TESTS = new Set(["-eq", "-ne", "-lt", "-le", "-gt", "-ge"]);

/** A variable name with at most a literal index: what `-v` can test without evaluating code. */
const VARIABLE_REFERENCE = /^[A-Za-z_][A-Za-z0-9_]*(\[([0-9]+|@|\*)\])?$/;

/** Parameters bash keeps numeric by itself. */
const NUMERIC_SPECIAL =
  /^([?#$!]|RANDOM|SRANDOM|SECONDS|LINENO|EPOCHSECONDS|BASHPID|PPID|UID|EUID|OPTIND)$/;

/** A `declare -p` line of a variable (or indexed array) holding only integers. */
const NUMERIC_DECLARATION =
  /^declare -[-ilrtux]* [A-Za-z_][A-Za-z0-9_]*=("-?[0-9]+"|-?[0-9]+|\((\s*\[[0-9]+\]="-?[0-9]+")*\s*\))$/;

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
