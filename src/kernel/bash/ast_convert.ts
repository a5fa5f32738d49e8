/** Converts mvdan-sh's raw Go syntax tree into shoal AST nodes (K-PARSE-2). */
import { utf8Decoder } from "../../protocol/utf8.ts";
import { MAX_AST_DEPTH } from "../../protocol/limits.ts";
import type {
  ArithmExpr,
  ArrayElem,
  Assign,
  BinaryCmd,
  CaseItem,
  Command,
  CStyleLoop,
  IfClause,
  Lit,
  Redirect,
  Span,
  Stmt,
  TestExpr,
  Word,
  WordIter,
  WordPart,
} from "./ast_nodes.ts";
import { tokenText } from "./ast_tokens.ts";

/**
 * A raw GopherJS value. The converter reads the Go structs behind mvdan-sh's JS wrappers
 * directly: building a wrapper per node costs tens of microseconds, which made large sources
 * take minutes. Go slices are `{$array,$offset,$length}`, Go strings are byte strings, nil
 * pointers are their type's `nil` object and a nil interface is a plain `{}`.
 */
// deno-lint-ignore no-explicit-any
export type GoNode = any;

/** Whether a raw Go pointer or interface value is nil. */
function isNil(value: GoNode): boolean {
  if (value === null || value === undefined) return true;
  const ctor = value.constructor;
  return ctor === Object || ctor?.nil === value;
}

/**
 * Each element of a raw Go slice converted by `convert`, the slice's hold on it dropped before it
 * is converted: the Go tree is garbage as fast as the shoal tree grows, so a parse holds little
 * more than the larger of the two, not both (a 2.2 MB `a=(x x … x)` held ~800 MiB of them at
 * once). A node's span is taken before its children are converted (it is read through them).
 */
function each<T>(slice: GoNode, convert: (node: GoNode) => T): T[] {
  const out: T[] = [];
  if (isNil(slice)) return out;
  const array = slice.$array;
  for (let i = slice.$offset, end = slice.$offset + slice.$length; i < end; i++) {
    const node = array[i];
    array[i] = null;
    out.push(convert(node));
  }
  return out;
}

const byteDecoder = utf8Decoder();

/** A Go string (one char per UTF-8 byte) as a JS string. */
function goString(value: string): string {
  if (!/[\u0080-\uffff]/.test(value)) return value;
  const bytes = new Uint8Array(value.length);
  for (let i = 0; i < value.length; i++) bytes[i] = value.charCodeAt(i);
  return byteDecoder.decode(bytes);
}

function span(node: GoNode): Span {
  return { start: Number(node.Pos().Offset()), end: Number(node.End().Offset()) };
}

function nodeType(node: GoNode): string {
  const name = String(node.constructor.string);
  return name.slice(name.lastIndexOf(".") + 1);
}

/** Walks the raw Go tree into plain objects, refusing nesting beyond MAX_AST_DEPTH. */
export class Converter {
  #depth = 0;
  /** Span of the node that exceeded the depth limit, if any. */
  deepest: Span | null = null;

  #enter(node: GoNode): void {
    if (++this.#depth > MAX_AST_DEPTH) {
      this.deepest = span(node);
      throw new RangeError("AST too deep");
    }
  }

  stmts(slice: GoNode): Stmt[] {
    return each(slice, (node) => this.stmt(node));
  }

  stmt(node: GoNode): Stmt {
    this.#enter(node);
    const result: Stmt = {
      type: "Stmt",
      span: span(node),
      cmd: isNil(node.Cmd) ? null : this.command(node.Cmd),
      negated: node.Negated === true,
      background: node.Background === true,
      redirs: each(node.Redirs, (redir) => this.redirect(redir)),
    };
    this.#depth--;
    return result;
  }

  redirect(node: GoNode): Redirect {
    return {
      type: "Redirect",
      span: span(node),
      op: tokenText(node.Op),
      n: isNil(node.N) ? null : goString(node.N.Value),
      word: this.word(node.Word),
      hdoc: isNil(node.Hdoc) ? null : this.word(node.Hdoc),
    };
  }

  command(node: GoNode): Command {
    this.#enter(node);
    const result = this.#command(node);
    this.#depth--;
    return result;
  }

  #command(node: GoNode): Command {
    const type = nodeType(node);
    const base = { span: span(node) };
    switch (type) {
      case "CallExpr":
        return { type, ...base, assigns: this.assigns(node.Assigns), args: this.words(node.Args) };
      case "BinaryCmd":
        return {
          type,
          ...base,
          op: tokenText(node.Op) as BinaryCmd["op"],
          x: this.stmt(node.X),
          y: this.stmt(node.Y),
        };
      case "Subshell":
      case "Block":
        return { type, ...base, stmts: this.stmts(node.Stmts) };
      case "IfClause":
        return this.ifClause(node);
      case "WhileClause":
        return {
          type,
          ...base,
          until: node.Until === true,
          cond: this.stmts(node.Cond),
          do: this.stmts(node.Do),
        };
      case "ForClause":
        return {
          type,
          ...base,
          select: node.Select === true,
          loop: this.loop(node.Loop),
          do: this.stmts(node.Do),
        };
      case "CaseClause":
        return {
          type,
          ...base,
          word: this.word(node.Word),
          items: each(node.Items, (item): CaseItem => ({
            type: "CaseItem",
            span: span(item),
            op: tokenText(item.Op),
            patterns: this.words(item.Patterns),
            stmts: this.stmts(item.Stmts),
          })),
        };
      case "FuncDecl":
        return { type, ...base, name: goString(node.Name.Value), body: this.stmt(node.Body) };
      case "ArithmCmd":
        return { type, ...base, x: this.arithm(node.X) };
      case "TestClause":
        return { type, ...base, x: this.test(node.X) };
      case "DeclClause":
        return {
          type,
          ...base,
          variant: isNil(node.Variant) ? "declare" : goString(node.Variant.Value),
          args: this.assigns(node.Args),
        };
      case "LetClause":
        return {
          type,
          ...base,
          exprs: each(node.Exprs, (expr) => this.arithm(expr)).filter((x) => x !== null),
        };
      case "TimeClause":
        return {
          type,
          ...base,
          posix: node.PosixFormat === true,
          stmt: isNil(node.Stmt) ? null : this.stmt(node.Stmt),
        };
      case "CoprocClause":
        return {
          type,
          ...base,
          name: isNil(node.Name) ? null : this.word(node.Name),
          stmt: this.stmt(node.Stmt),
        };
      default:
        return { type, ...base };
    }
  }

  ifClause(node: GoNode): IfClause {
    this.#enter(node);
    const result: IfClause = {
      type: "IfClause",
      span: span(node),
      cond: this.stmts(node.Cond),
      then: this.stmts(node.Then),
      else: isNil(node.Else) ? null : this.ifClause(node.Else),
    };
    this.#depth--;
    return result;
  }

  loop(node: GoNode): WordIter | CStyleLoop {
    if (nodeType(node) === "WordIter") {
      return {
        type: "WordIter",
        span: span(node),
        name: goString(node.Name.Value),
        items: this.words(node.Items),
      };
    }
    return {
      type: "CStyleLoop",
      span: span(node),
      init: this.arithm(node.Init),
      cond: this.arithm(node.Cond),
      post: this.arithm(node.Post),
    };
  }

  assigns(slice: GoNode): Assign[] {
    return each(slice, (node): Assign => ({
      type: "Assign",
      span: span(node),
      name: isNil(node.Name) ? null : goString(node.Name.Value),
      append: node.Append === true,
      naked: node.Naked === true,
      index: this.arithm(node.Index),
      value: isNil(node.Value) ? null : this.word(node.Value),
      array: isNil(node.Array) ? null : {
        type: "ArrayExpr",
        span: span(node.Array),
        elems: each(node.Array.Elems, (elem): ArrayElem => ({
          type: "ArrayElem",
          span: span(elem),
          index: this.arithm(elem.Index),
          value: isNil(elem.Value) ? null : this.word(elem.Value),
        })),
      },
    }));
  }

  words(slice: GoNode): Word[] {
    return each(slice, (node) => this.word(node));
  }

  word(node: GoNode): Word {
    this.#enter(node);
    const at = span(node);
    const parts = this.parts(node.Parts);
    this.#depth--;
    return { type: "Word", span: at, parts, lit: literalText(parts) };
  }

  parts(slice: GoNode): WordPart[] {
    return each(slice, (node) => this.part(node));
  }

  part(node: GoNode): WordPart {
    this.#enter(node);
    const result = this.#part(node);
    this.#depth--;
    return result;
  }

  #part(node: GoNode): WordPart {
    const type = nodeType(node);
    const base = { span: span(node) };
    switch (type) {
      case "Lit":
        return { type, ...base, value: goString(node.Value) };
      case "SglQuoted":
        return { type, ...base, dollar: node.Dollar === true, value: goString(node.Value) };
      case "DblQuoted":
        return { type, ...base, dollar: node.Dollar === true, parts: this.parts(node.Parts) };
      case "ParamExp":
        return {
          type,
          ...base,
          short: node.Short === true,
          param: isNil(node.Param) ? "" : goString(node.Param.Value),
          excl: node.Excl === true,
          length: node.Length === true,
          width: node.Width === true,
          index: this.arithm(node.Index),
          slice: isNil(node.Slice)
            ? null
            : { offset: this.arithm(node.Slice.Offset), length: this.arithm(node.Slice.Length) },
          repl: isNil(node.Repl) ? null : {
            all: node.Repl.All === true,
            orig: isNil(node.Repl.Orig) ? null : this.word(node.Repl.Orig),
            with: isNil(node.Repl.With) ? null : this.word(node.Repl.With),
          },
          names: node.Names ? tokenText(node.Names) : null,
          exp: isNil(node.Exp) ? null : {
            op: tokenText(node.Exp.Op),
            word: isNil(node.Exp.Word) ? null : this.word(node.Exp.Word),
          },
        };
      case "CmdSubst":
        return {
          type,
          ...base,
          backquotes: node.Backquotes === true,
          stmts: this.stmts(node.Stmts),
        };
      case "ArithmExp":
        return { type, ...base, x: this.arithm(node.X) };
      case "ProcSubst":
        return { type, ...base, op: tokenText(node.Op), stmts: this.stmts(node.Stmts) };
      case "ExtGlob":
        return { type, ...base, op: tokenText(node.Op), pattern: goString(node.Pattern.Value) };
      default:
        return { type, ...base };
    }
  }

  arithm(node: GoNode): ArithmExpr | null {
    if (isNil(node)) return null;
    this.#enter(node);
    const type = nodeType(node);
    const base = { span: span(node) };
    let result: ArithmExpr;
    if (type === "Word") {
      result = this.word(node);
    } else if (type === "BinaryArithm") {
      const x = this.arithm(node.X)!;
      result = { type, ...base, op: tokenText(node.Op), x, y: this.arithm(node.Y)! };
    } else if (type === "UnaryArithm") {
      const op = tokenText(node.Op);
      result = { type, ...base, op, post: node.Post === true, x: this.arithm(node.X)! };
    } else if (type === "ParenArithm") {
      result = { type, ...base, x: this.arithm(node.X)! };
    } else {
      result = { type, ...base };
    }
    this.#depth--;
    return result;
  }

  test(node: GoNode): TestExpr {
    this.#enter(node);
    const type = nodeType(node);
    const base = { span: span(node) };
    let result: TestExpr;
    if (type === "Word") {
      result = this.word(node);
    } else if (type === "BinaryTest") {
      const x = this.test(node.X);
      result = { type, ...base, op: tokenText(node.Op), x, y: this.test(node.Y) };
    } else if (type === "UnaryTest") {
      result = { type, ...base, op: tokenText(node.Op), x: this.test(node.X) };
    } else if (type === "ParenTest") {
      result = { type, ...base, x: this.test(node.X) };
    } else {
      result = { type, ...base };
    }
    this.#depth--;
    return result;
  }
}

/**
 * The word's text when bash passes it through unchanged: only unquoted literal parts, and no
 * backslash, glob, brace or tilde expansion to do.
 */
function literalText(parts: WordPart[]): string | null {
  let text = "";
  for (const part of parts) {
    if (part.type !== "Lit") return null;
    text += (part as Lit).value;
  }
  if (/[\\*?]/.test(text)) return null;
  if (/\[.*\]/.test(text)) return null;
  if (/\{[^{}]*(,|\.\.)[^{}]*\}/.test(text)) return null;
  if (/(^|[=:])~/.test(text)) return null;
  return text;
}
