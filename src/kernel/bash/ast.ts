/**
 * Bash source → shoal AST JSON (K-PARSE-1..3), built on mvdan-sh (GopherJS build of mvdan/sh v3).
 *
 * Every node is `{type, span:{start,end}, …}` with byte offsets into the UTF-8 of the source.
 */
import sh from "mvdan-sh";
import { ErrorCode, RpcError } from "../../protocol/errors.ts";
import { MAX_AST_DEPTH } from "../../protocol/limits.ts";

/** Byte range of a node in the UTF-8 source, end exclusive (K-PARSE-2). */
export interface Span {
  start: number;
  end: number;
}

/** Root of the AST (K-PARSE-2). */
export interface File {
  type: "File";
  span: Span;
  stmts: Stmt[];
}

/** One statement: a command with its modifiers and redirections (K-PARSE-2). */
export interface Stmt {
  type: "Stmt";
  span: Span;
  cmd: Command | null;
  negated: boolean;
  background: boolean;
  redirs: Redirect[];
}

/** Anything that can stand in a statement's `cmd`. */
export type Command =
  | CallExpr
  | BinaryCmd
  | Subshell
  | Block
  | IfClause
  | WhileClause
  | ForClause
  | CaseClause
  | FuncDecl
  | ArithmCmd
  | TestClause
  | DeclClause
  | LetClause
  | TimeClause
  | CoprocClause
  | UnknownNode;

/** A simple command: assignments then words (K-PARSE-2). */
export interface CallExpr {
  type: "CallExpr";
  span: Span;
  assigns: Assign[];
  args: Word[];
}

/** `x && y`, `x || y`, `x | y`, `x |& y` (K-PARSE-2). */
export interface BinaryCmd {
  type: "BinaryCmd";
  span: Span;
  op: "&&" | "||" | "|" | "|&";
  x: Stmt;
  y: Stmt;
}

/** `( … )`. */
export interface Subshell {
  type: "Subshell";
  span: Span;
  stmts: Stmt[];
}

/** `{ …; }`. */
export interface Block {
  type: "Block";
  span: Span;
  stmts: Stmt[];
}

/** `if`/`elif`/`else`; an `else` branch is an IfClause with empty `cond`. */
export interface IfClause {
  type: "IfClause";
  span: Span;
  cond: Stmt[];
  then: Stmt[];
  else: IfClause | null;
}

/** `while` or `until` loop. */
export interface WhileClause {
  type: "WhileClause";
  span: Span;
  until: boolean;
  cond: Stmt[];
  do: Stmt[];
}

/** `for`/`select` loop over words or C-style. */
export interface ForClause {
  type: "ForClause";
  span: Span;
  select: boolean;
  loop: WordIter | CStyleLoop;
  do: Stmt[];
}

/** `NAME [in WORDS]` of a for loop (`items` is empty without `in`). */
export interface WordIter {
  type: "WordIter";
  span: Span;
  name: string;
  items: Word[];
}

/** `((init; cond; post))` of a for loop. */
export interface CStyleLoop {
  type: "CStyleLoop";
  span: Span;
  init: ArithmExpr | null;
  cond: ArithmExpr | null;
  post: ArithmExpr | null;
}

/** `case WORD in … esac`. */
export interface CaseClause {
  type: "CaseClause";
  span: Span;
  word: Word;
  items: CaseItem[];
}

/** One `patterns) stmts ;;` arm. */
export interface CaseItem {
  type: "CaseItem";
  span: Span;
  op: string;
  patterns: Word[];
  stmts: Stmt[];
}

/** Function definition (K-PARSE-2). */
export interface FuncDecl {
  type: "FuncDecl";
  span: Span;
  name: string;
  body: Stmt;
}

/** `(( expr ))`. */
export interface ArithmCmd {
  type: "ArithmCmd";
  span: Span;
  x: ArithmExpr | null;
}

/** `[[ expr ]]`. */
export interface TestClause {
  type: "TestClause";
  span: Span;
  x: TestExpr;
}

/** `declare`, `local`, `export`, `readonly`, `typeset`, `nameref` with their operands. */
export interface DeclClause {
  type: "DeclClause";
  span: Span;
  variant: string;
  args: Assign[];
}

/** `let expr…`. */
export interface LetClause {
  type: "LetClause";
  span: Span;
  exprs: ArithmExpr[];
}

/** `time [-p] stmt`. */
export interface TimeClause {
  type: "TimeClause";
  span: Span;
  posix: boolean;
  stmt: Stmt | null;
}

/** `coproc [NAME] stmt`. */
export interface CoprocClause {
  type: "CoprocClause";
  span: Span;
  name: Word | null;
  stmt: Stmt;
}

/**
 * `NAME=value`, `NAME+=value`, `NAME[i]=v`, `NAME=(…)`; in a DeclClause also a bare
 * operand (`naked`: a name, or an option/dynamic word in `value`).
 */
export interface Assign {
  type: "Assign";
  span: Span;
  name: string | null;
  append: boolean;
  naked: boolean;
  index: ArithmExpr | null;
  value: Word | null;
  array: ArrayExpr | null;
}

/** `( elems… )` of an array assignment. */
export interface ArrayExpr {
  type: "ArrayExpr";
  span: Span;
  elems: ArrayElem[];
}

/** One element of an array assignment, `[index]=value` or `value`. */
export interface ArrayElem {
  type: "ArrayElem";
  span: Span;
  index: ArithmExpr | null;
  value: Word | null;
}

/** A redirection; `n` is the fd or `{var}` text before the operator (K-PARSE-2). */
export interface Redirect {
  type: "Redirect";
  span: Span;
  op: string;
  n: string | null;
  word: Word;
  hdoc: Word | null;
}

/** A shell word; `lit` is its text when bash would pass it unchanged (K-PARSE-2). */
export interface Word {
  type: "Word";
  span: Span;
  parts: WordPart[];
  lit: string | null;
}

/** Pieces a word is made of. */
export type WordPart =
  | Lit
  | SglQuoted
  | DblQuoted
  | ParamExp
  | CmdSubst
  | ArithmExp
  | ProcSubst
  | ExtGlob
  | UnknownNode;

/** Unquoted literal text exactly as written (backslashes kept). */
export interface Lit {
  type: "Lit";
  span: Span;
  value: string;
}

/** `'…'`, or `$'…'` when `dollar` (value is the raw text between the quotes). */
export interface SglQuoted {
  type: "SglQuoted";
  span: Span;
  dollar: boolean;
  value: string;
}

/** `"…"`, or `$"…"` when `dollar`. */
export interface DblQuoted {
  type: "DblQuoted";
  span: Span;
  dollar: boolean;
  parts: WordPart[];
}

/** `$NAME` (`short`) or `${…}` in any of its forms. */
export interface ParamExp {
  type: "ParamExp";
  span: Span;
  short: boolean;
  param: string;
  excl: boolean;
  length: boolean;
  width: boolean;
  index: ArithmExpr | null;
  slice: { offset: ArithmExpr | null; length: ArithmExpr | null } | null;
  repl: { all: boolean; orig: Word | null; with: Word | null } | null;
  names: string | null;
  exp: { op: string; word: Word | null } | null;
}

/** `$(…)` or backquotes. */
export interface CmdSubst {
  type: "CmdSubst";
  span: Span;
  backquotes: boolean;
  stmts: Stmt[];
}

/** `$(( … ))` or `$[ … ]`. */
export interface ArithmExp {
  type: "ArithmExp";
  span: Span;
  x: ArithmExpr | null;
}

/** `<(…)` or `>(…)`. */
export interface ProcSubst {
  type: "ProcSubst";
  span: Span;
  op: string;
  stmts: Stmt[];
}

/** `?(…)`, `*(…)`, `+(…)`, `@(…)`, `!(…)`; `pattern` is the text inside. */
export interface ExtGlob {
  type: "ExtGlob";
  span: Span;
  op: string;
  pattern: string;
}

/** Arithmetic expression nodes. */
export type ArithmExpr = BinaryArithm | UnaryArithm | ParenArithm | Word | UnknownNode;

/** `x op y` in arithmetic, including assignments. */
export interface BinaryArithm {
  type: "BinaryArithm";
  span: Span;
  op: string;
  x: ArithmExpr;
  y: ArithmExpr;
}

/** `op x` or `x op` (`post`) in arithmetic. */
export interface UnaryArithm {
  type: "UnaryArithm";
  span: Span;
  op: string;
  post: boolean;
  x: ArithmExpr;
}

/** `( x )` in arithmetic. */
export interface ParenArithm {
  type: "ParenArithm";
  span: Span;
  x: ArithmExpr;
}

/** `[[ … ]]` expression nodes. */
export type TestExpr = BinaryTest | UnaryTest | ParenTest | Word | UnknownNode;

/** `x op y` inside `[[ ]]`. */
export interface BinaryTest {
  type: "BinaryTest";
  span: Span;
  op: string;
  x: TestExpr;
  y: TestExpr;
}

/** `op x` inside `[[ ]]`. */
export interface UnaryTest {
  type: "UnaryTest";
  span: Span;
  op: string;
  x: TestExpr;
}

/** `( x )` inside `[[ ]]`. */
export interface ParenTest {
  type: "ParenTest";
  span: Span;
  x: TestExpr;
}

/** A node kind this converter does not model (only type and span). */
export interface UnknownNode {
  type: string;
  span: Span;
}

/** Data of a `-32001` parse error (K-PARSE-3). */
export interface ParseErrorData {
  span: Span;
  line: number;
  col: number;
  hint: string | null;
}

/**
 * Token texts of mvdan/sh v3's `token` enum, indexed by value (the operator numbers the
 * GopherJS build exposes). Pinned to mvdan-sh@0.10.1; tests check every operator kind.
 */
const TOKEN_TEXT: readonly string[] = [
  "illegalTok",
  "EOF",
  "Newl",
  "Lit",
  "LitWord",
  "LitRedir",
  "'",
  '"',
  "`",
  "&",
  "&&",
  "||",
  "|",
  "|&",
  "$",
  "$'",
  '$"',
  "${",
  "$[",
  "$(",
  "$((",
  "[",
  "[[",
  "(",
  "((",
  "}",
  "]",
  ")",
  "))",
  ";",
  ";;",
  ";&",
  ";;&",
  ";|",
  "!",
  "~",
  "++",
  "--",
  "*",
  "**",
  "==",
  "!=",
  "<=",
  ">=",
  "+=",
  "-=",
  "*=",
  "/=",
  "%=",
  "&=",
  "|=",
  "^=",
  "<<=",
  ">>=",
  ">",
  ">>",
  "<",
  "<>",
  "<&",
  ">&",
  ">|",
  "<<",
  "<<-",
  "<<<",
  "&>",
  "&>>",
  "<(",
  ">(",
  "+",
  ":+",
  "-",
  ":-",
  "?",
  ":?",
  "=",
  ":=",
  "%",
  "%%",
  "#",
  "##",
  "^",
  "^^",
  ",",
  ",,",
  "@",
  "/",
  "//",
  ":",
  "-e",
  "-f",
  "-d",
  "-c",
  "-b",
  "-p",
  "-S",
  "-L",
  "-k",
  "-g",
  "-u",
  "-G",
  "-O",
  "-N",
  "-r",
  "-w",
  "-x",
  "-s",
  "-t",
  "-z",
  "-n",
  "-o",
  "-v",
  "-R",
  "=~",
  "-nt",
  "-ot",
  "-ef",
  "-eq",
  "-ne",
  "-le",
  "-ge",
  "-lt",
  "-gt",
  "?(",
  "*(",
  "+(",
  "@(",
  "!(",
]; // deno-fmt-ignore

const encoder = new TextEncoder();

/** Parses bash source into the shoal AST; a syntax error throws `RpcError(-32001)` (K-PARSE-3). */
export function parseBash(src: string): File {
  // GopherJS mangles lone surrogates; replacing them first keeps offsets equal to TextEncoder's.
  const text = src.toWellFormed();
  const length = encoder.encode(text).length;
  // deno-lint-ignore no-explicit-any
  let root: any;
  try {
    root = sh.syntax.NewParser().Parse(text, "src");
  } catch (error) {
    throw parseError(text, length, error);
  }
  const converter = new Converter();
  try {
    const file = root.__internal_object__;
    return { type: "File", span: { start: 0, end: length }, stmts: converter.stmts(file.Stmts) };
  } catch (error) {
    if (error instanceof RangeError) throw tooDeep(text, length, converter.deepest?.start ?? 0);
    throw error;
  }
}

/**
 * A raw GopherJS value. The converter reads the Go structs behind mvdan-sh's JS wrappers
 * directly: building a wrapper per node costs tens of microseconds, which made large sources
 * take minutes. Go slices are `{$array,$offset,$length}`, Go strings are byte strings, nil
 * pointers are their type's `nil` object and a nil interface is a plain `{}`.
 */
// deno-lint-ignore no-explicit-any
type GoNode = any;

/** Whether a raw Go pointer or interface value is nil. */
function isNil(value: GoNode): boolean {
  if (value === null || value === undefined) return true;
  const ctor = value.constructor;
  return ctor === Object || ctor?.nil === value;
}

/** Elements of a raw Go slice. */
function items(slice: GoNode): GoNode[] {
  const out: GoNode[] = [];
  if (isNil(slice)) return out;
  for (let i = 0; i < slice.$length; i++) out.push(slice.$array[slice.$offset + i]);
  return out;
}

const byteDecoder = new TextDecoder();

/** A Go string (one char per UTF-8 byte) as a JS string. */
function goString(value: string): string {
  if (!/[\u0080-\uffff]/.test(value)) return value;
  const bytes = new Uint8Array(value.length);
  for (let i = 0; i < value.length; i++) bytes[i] = value.charCodeAt(i);
  return byteDecoder.decode(bytes);
}

function parseError(src: string, length: number, error: unknown): RpcError {
  if (error instanceof RangeError) return tooDeep(src, length, 0);
  const e = error as GoNode;
  if (e === null || typeof e !== "object" || typeof e.Text !== "string" || !e.Pos) {
    return new RpcError(
      ErrorCode.PARSE_ERROR,
      `cannot parse source: ${String(error)}`,
      {
        span: { start: 0, end: 0 },
        line: 1,
        col: 1,
        hint: null,
      } satisfies ParseErrorData,
    );
  }
  const start = Math.min(Number(e.Pos.Offset()), length);
  const data: ParseErrorData = {
    span: { start, end: start + scalarLength(src, start, length) },
    line: Number(e.Pos.Line()) || 1,
    col: Number(e.Pos.Col()) || 1,
    hint: e.Incomplete === true ? "the source ends before this construct is closed" : null,
  };
  return new RpcError(ErrorCode.PARSE_ERROR, e.Text, data);
}

function tooDeep(src: string, length: number, offset: number): RpcError {
  const { line, col } = lineCol(src, offset);
  const data: ParseErrorData = {
    span: { start: offset, end: Math.min(offset + 1, length) },
    line,
    col,
    hint: `nesting deeper than ${MAX_AST_DEPTH} levels is not supported`,
  };
  return new RpcError(ErrorCode.PARSE_ERROR, "source is nested too deeply", data);
}

/** Bytes of the UTF-8 scalar starting at byte `offset` (0 at the end of the source). */
function scalarLength(src: string, offset: number, length: number): number {
  if (offset >= length) return 0;
  const bytes = encoder.encode(src);
  const lead = bytes[offset];
  if (lead < 0x80) return 1;
  if (lead >= 0xf0) return Math.min(4, length - offset);
  if (lead >= 0xe0) return Math.min(3, length - offset);
  return Math.min(2, length - offset);
}

/** 1-based line and byte column of a byte offset. */
function lineCol(src: string, offset: number): { line: number; col: number } {
  const before = encoder.encode(src).subarray(0, offset);
  let line = 1;
  let lineStart = 0;
  for (let i = 0; i < before.length; i++) {
    if (before[i] === 0x0a) {
      line++;
      lineStart = i + 1;
    }
  }
  return { line, col: offset - lineStart + 1 };
}

function tokenText(value: number): string {
  return TOKEN_TEXT[value] ?? `token(${value})`;
}

function span(node: GoNode): Span {
  return { start: Number(node.Pos().Offset()), end: Number(node.End().Offset()) };
}

function nodeType(node: GoNode): string {
  const name = String(node.constructor.string);
  return name.slice(name.lastIndexOf(".") + 1);
}

/** Walks the raw Go tree into plain objects, refusing nesting beyond MAX_AST_DEPTH. */
class Converter {
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
    return items(slice).map((node) => this.stmt(node));
  }

  stmt(node: GoNode): Stmt {
    this.#enter(node);
    const result: Stmt = {
      type: "Stmt",
      span: span(node),
      cmd: isNil(node.Cmd) ? null : this.command(node.Cmd),
      negated: node.Negated === true,
      background: node.Background === true,
      redirs: items(node.Redirs).map((redir) => this.redirect(redir)),
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
          items: items(node.Items).map((item): CaseItem => ({
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
          exprs: items(node.Exprs).map((expr) => this.arithm(expr)).filter((x) => x !== null),
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
    return items(slice).map((node): Assign => ({
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
        elems: items(node.Array.Elems).map((elem): ArrayElem => ({
          type: "ArrayElem",
          span: span(elem),
          index: this.arithm(elem.Index),
          value: isNil(elem.Value) ? null : this.word(elem.Value),
        })),
      },
    }));
  }

  words(slice: GoNode): Word[] {
    return items(slice).map((node) => this.word(node));
  }

  word(node: GoNode): Word {
    this.#enter(node);
    const parts = this.parts(node.Parts);
    this.#depth--;
    return { type: "Word", span: span(node), parts, lit: literalText(parts) };
  }

  parts(slice: GoNode): WordPart[] {
    return items(slice).map((node) => this.part(node));
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
