/**
 * Bash source → shoal AST JSON (K-PARSE-1..3), built on mvdan-sh (GopherJS build of mvdan/sh v3).
 *
 * Every node is `{type, span:{start,end}, …}` with byte offsets into the UTF-8 of the source.
 */
import sh from "mvdan-sh";
import { ErrorCode, RpcError } from "../../protocol/errors.ts";
import { MAX_AST_DEPTH, MAX_PARSE_UNITS } from "../../protocol/limits.ts";
import { passesParseBudget } from "./parse_budget.ts";

import type { File, ParseErrorData } from "./ast_nodes.ts";
import { Converter, type GoNode } from "./ast_convert.ts";

export type * from "./ast_nodes.ts";

const encoder = new TextEncoder();

/**
 * V8's own limit of stack frames an error records. mvdan-sh's GopherJS runtime sets it to
 * Infinity as it loads, for the whole isolate: every error the kernel threw after its first parse
 * (a failed stat, an RpcError) recorded its whole stack. GopherJS's `recover` counts frames by
 * `new Error().stack`, so a parse runs with no limit ({@link goStacks}) and the kernel with this.
 */
const STACK_LIMIT = 10;
Error.stackTraceLimit = STACK_LIMIT;

/** `run()` with the unlimited stacks GopherJS's panic and recover count frames by. */
function goStacks<T>(run: () => T): T {
  Error.stackTraceLimit = Infinity;
  try {
    return run();
  } finally {
    Error.stackTraceLimit = STACK_LIMIT;
  }
}

/**
 * The parser, reused: a parser's first parse allocates about 100 KiB of buffers that later ones
 * reuse (a new parser per exec made the kernel's young generation collect about every other exec).
 * A parse resets its state; returned trees stay valid.
 */
// deno-lint-ignore no-explicit-any
let parser: any = null;

/** Parses bash source into the shoal AST; a syntax error throws `RpcError(-32001)` (K-PARSE-3). */
export function parseBash(src: string): File {
  // GopherJS mangles lone surrogates; replacing them first keeps offsets equal to TextEncoder's.
  const text = src.toWellFormed();
  const length = encoder.encode(text).length;
  const over = passesParseBudget(text, MAX_PARSE_UNITS);
  if (over >= 0) {
    const offset = encoder.encode(text.slice(0, over)).length;
    throw beyondLimit(
      text,
      length,
      offset,
      "source is too large to parse",
      `more than ${MAX_PARSE_UNITS} words and operators are not supported`,
    );
  }
  // deno-lint-ignore no-explicit-any
  let root: any;
  try {
    parser ??= goStacks(() => sh.syntax.NewParser());
    root = goStacks(() => parser.Parse(text, "src"));
  } catch (error) {
    parser = null; // whatever state a failed parse left behind is not reused
    throw parseError(text, length, error);
  }
  const converter = new Converter();
  try {
    const file = root.__internal_object__;
    const stmts = goStacks(() => converter.stmts(file.Stmts));
    return { type: "File", span: { start: 0, end: length }, stmts };
  } catch (error) {
    if (error instanceof RangeError) throw tooDeep(text, length, converter.deepest?.start ?? 0);
    throw error;
  }
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
  const start = Math.min(Number(goStacks(() => e.Pos.Offset())), length);
  // Line and column counted from the offset: the parser's own column skips NUL bytes.
  const data: ParseErrorData = {
    span: { start, end: start + scalarLength(src, start, length) },
    ...lineCol(src, start),
    hint: e.Incomplete === true ? "the source ends before this construct is closed" : null,
  };
  return new RpcError(ErrorCode.PARSE_ERROR, e.Text, data);
}

function tooDeep(src: string, length: number, offset: number): RpcError {
  const hint = `nesting deeper than ${MAX_AST_DEPTH} levels is not supported`;
  return beyondLimit(src, length, offset, "source is nested too deeply", hint);
}

/** The -32001 of a source the parser does not take, pointing at the byte where a limit is passed. */
function beyondLimit(
  src: string,
  length: number,
  offset: number,
  message: string,
  hint: string,
): RpcError {
  const { line, col } = lineCol(src, offset);
  const data: ParseErrorData = {
    span: { start: offset, end: Math.min(offset + 1, length) },
    line,
    col,
    hint,
  };
  return new RpcError(ErrorCode.PARSE_ERROR, message, data);
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
