/**
 * Node types of the shoal bash AST (K-PARSE-2): every node is `{type, span:{start,end}, …}` with
 * byte offsets into the UTF-8 of the source.
 */

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
