/**
 * The pre-pass of effect analysis: which variables the source assigns and where, which functions
 * it defines and unsets, so later references know what they may see (K-EFF-3).
 */
import type {
  ArithmExpr,
  Assign,
  CallExpr,
  DeclClause,
  File,
  FuncDecl,
  ParamExp,
  Redirect,
  Word,
} from "../bash/ast.ts";
import { commandAssignments, staticWord } from "./_assigned_names.ts";
import { IDENTIFIER } from "./_shell_tables.ts";
import type { StepBudget } from "./_step_budget.ts";

/** One assignment of a variable. */
interface Assignment {
  offset: number;
  persistent: boolean;
  /** Whether the value is an integer (a literal, `$((…))`, an arithmetic assignment). */
  numeric: boolean;
}

/** A function definition found in the source. */
export interface FunctionDef {
  decl: FuncDecl;
  /** Defined unconditionally at top level, and never unset in the source. */
  reliable: boolean;
}

/** A decimal, octal, hex or `base#digits` integer: arithmetic on it runs nothing. */
export const NUMBER = /^[-+]?(0[xX][0-9a-fA-F]+|[0-9]+(#[0-9a-zA-Z@_]+)?)$/;

/** Whether a word's value is an integer: a literal number, empty, one `$((…))` or `${#x}`. */
function numericWord(word: Word | null | undefined): boolean {
  if (word === null || word === undefined) return true;
  const only = word.parts.length === 1 ? word.parts[0] : null;
  if (only?.type === "ArithmExp") return true;
  if (only?.type === "ParamExp" && (only as ParamExp).length) return true;
  const text = staticWord(word);
  return text !== null && (text === "" || NUMBER.test(text));
}

/** Whether an assignment stores only integers. */
function numericAssign(assign: Assign): boolean {
  if (assign.array !== null) return assign.array.elems.every((elem) => numericWord(elem.value));
  return numericWord(assign.value);
}

/** Facts about one source collected before its statements are followed. */
export class SourceScan {
  readonly #budget: StepBudget;
  /** Assignments by variable name, with their offsets. */
  readonly assignments = new Map<string, Assignment[]>();
  /** Function definitions by name. */
  readonly functions = new Map<string, FunctionDef[]>();
  readonly #unset = new Set<string>();
  /** A command may assign a variable named by a dynamic word: any variable may have changed. */
  anyAssigned = false;
  /** The source's here-document redirections (`<<`, `<<-`). */
  readonly heredocs: Redirect[] = [];
  /** Variables the source declares with the integer attribute (`declare -i`). */
  readonly integerNames = new Set<string>();
  /** Whether `IFS` may differ from the default when words are split. */
  ifsChanged = false;
  /** References at or before this offset may see assignments made before it (loops, functions). */
  floor = 0;

  constructor(budget: StepBudget) {
    this.#budget = budget;
  }

  /** Scans `file`; `inheritedIfs` when the session already sets `IFS`. */
  scan(file: File, inheritedIfs: boolean): void {
    this.#visit(file);
    for (const stmt of file.stmts) {
      if (stmt.cmd?.type !== "FuncDecl" || stmt.background || stmt.negated) continue;
      const decl = stmt.cmd as FuncDecl;
      for (const def of this.functions.get(decl.name) ?? []) {
        if (def.decl === decl) def.reliable = !this.#unset.has(decl.name);
      }
    }
    this.ifsChanged = inheritedIfs || this.assignments.has("IFS") || this.anyAssigned;
  }

  #assign(name: string, offset: number, persistent: boolean, numeric = false): void {
    const list = this.assignments.get(name) ?? [];
    list.push({ offset, persistent, numeric });
    this.assignments.set(name, list);
  }

  /** Visits every node once, recording variable assignments, definitions and unsets. */
  #visit(node: unknown): void {
    if (Array.isArray(node)) {
      for (const item of node) this.#visit(item);
      return;
    }
    if (node === null || typeof node !== "object") return;
    this.#budget.tick();
    const typed = node as { type?: string; span?: { start: number } };
    const offset = typed.span?.start ?? 0;
    switch (typed.type) {
      case "CallExpr": {
        const call = node as CallExpr;
        const standalone = call.args.length === 0;
        for (const assign of call.assigns) {
          if (assign.name !== null) {
            this.#assign(assign.name, assign.span.start, standalone, numericAssign(assign));
          }
        }
        const assigned = commandAssignments(call.args);
        for (const { name, offset, persistent } of assigned.names) {
          // An unset variable is 0 in arithmetic; anything else these builtins assign is data.
          this.#assign(name, offset, persistent, assigned.builtin === "unset");
          if (assigned.builtin === "unset") this.#unset.add(name);
        }
        if (assigned.unknown) this.anyAssigned = true;
        break;
      }
      case "DeclClause": {
        const decl = node as DeclClause;
        const keeps = decl.variant !== "local";
        const integer = decl.args.some((arg) =>
          arg.name === null && /^-[a-zA-Z]*i/.test(staticWord(arg.value ?? undefined) ?? "")
        );
        for (const arg of decl.args) {
          if (arg.name === null) continue;
          if (integer) this.integerNames.add(arg.name);
          // A naked `declare NAME` keeps the value (inside a function it makes an unset local).
          this.#assign(arg.name, arg.span.start, keeps && !arg.naked, numericAssign(arg));
        }
        break;
      }
      case "CoprocClause": {
        const coproc = node as { name: Word | null; span: { start: number } };
        const name = coproc.name === null ? "COPROC" : staticWord(coproc.name);
        if (name === null) this.anyAssigned = true;
        else this.#assign(name, coproc.span.start, true);
        break;
      }
      case "WordIter": {
        const iter = node as { name: string; items: Word[]; span: { start: number } };
        const numeric = iter.items.every((word) => NUMBER.test(staticWord(word) ?? ""));
        this.#assign(iter.name, iter.span.start, true, numeric);
        break;
      }
      case "ParamExp": {
        const exp = node as ParamExp;
        if (exp.exp !== null && (exp.exp.op === "=" || exp.exp.op === ":=")) {
          this.#assign(exp.param, offset, true, numericWord(exp.exp.word));
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
          this.#assign(target, offset, true, true);
        }
        break;
      }
      case "Redirect": {
        const redirect = node as Redirect;
        const fdVar = redirect.n?.match(/^\{([A-Za-z_][A-Za-z0-9_]*)\}$/);
        if (fdVar) this.#assign(fdVar[1], offset, true, true);
        if (redirect.hdoc !== null) this.heredocs.push(redirect);
        break;
      }
      case "FuncDecl": {
        const decl = node as FuncDecl;
        const defs = this.functions.get(decl.name) ?? [];
        defs.push({ decl, reliable: false });
        this.functions.set(decl.name, defs);
        break;
      }
    }
    for (const value of Object.values(node)) {
      if (value !== null && typeof value === "object") this.#visit(value);
    }
  }

  /** Whether `name` may hold a value the source assigned before a reference at `offset`. */
  assignedBefore(name: string, offset: number): boolean {
    if (this.anyAssigned) return true;
    const limit = Math.max(offset, this.floor);
    return (this.assignments.get(name) ?? []).some((a) => a.offset < limit);
  }
}
