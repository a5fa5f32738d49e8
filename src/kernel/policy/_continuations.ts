/**
 * Line continuations bash reads otherwise than the parser (K-EFF-3). Bash removes every
 * backslash-newline before it tokenizes, in a double-quoted string and in an unquoted
 * here-document's body too, but mvdan-sh 0.10 does not join a `$` with what follows one
 * (`"$\⏎(cmd)"` is a command substitution to bash and text to the parser), and ends an unquoted
 * here-document only at its delimiter as one line (bash ends `cat <<EOF` at `E\⏎OF` and runs the
 * lines after it, which the parser took for the body). The analysis cannot follow such a source.
 */
import type { File, Redirect, Word } from "../bash/ast.ts";

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** A backslash-newline that bash removes: one ending an odd run of backslashes. */
const CONTINUATION = /(?<!\\)(?:\\\\)*\\\n/;

/** Whether a here-document's delimiter is quoted, which keeps its body as written. */
function quotedDelimiter(word: Word): boolean {
  return word.parts.some((part) =>
    part.type !== "Lit" || (part as { value: string }).value.includes("\\")
  );
}

/**
 * Why bash may read `src` otherwise than `file`, its parsed tree, says, given the tree's
 * here-document redirections: for its line continuations or its carriage returns; null when it
 * cannot.
 */
export function continuationReason(
  src: string,
  heredocs: readonly Redirect[],
  file: File,
): string | null {
  return lineContinuationReason(src, heredocs) ?? carriageReturnReason(src, file);
}

function lineContinuationReason(src: string, heredocs: readonly Redirect[]): string | null {
  if (!src.includes("\\\n")) return null;
  if (src.includes("$\\\n")) return "line continuation after $";
  let bytes: Uint8Array | null = null;
  for (const redirect of heredocs) {
    if (redirect.hdoc === null || quotedDelimiter(redirect.word)) continue;
    // Spans are byte offsets into the UTF-8 of the well-formed source (parseBash); the body's
    // span starts after the continuations that lead it, so the two bytes before are read too.
    bytes ??= encoder.encode(src.toWellFormed());
    const { start, end } = redirect.hdoc.span;
    const body = decoder.decode(bytes.subarray(Math.max(0, start - 2), end));
    if (CONTINUATION.test(body)) return "line continuation in a here-document";
  }
  return null;
}

const CR = 0x0d;

/**
 * Why bash may read `src` otherwise than `file`, its parsed tree, for its carriage returns; null
 * when it cannot. Bash reads a carriage return as a character of the word it is in, while
 * mvdan-sh 0.10 reads an unquoted one as a blank between two words: to bash `echo<CR>z` runs the
 * program `echo<CR>z` found on PATH, to the parser the builtin echo with the argument `z`. One
 * the parser kept in a literal (quoted text, a here-document's body) is text to both.
 */
function carriageReturnReason(src: string, file: File): string | null {
  if (!src.includes("\r")) return null;
  const kept: { start: number; end: number }[] = [];
  const stack: unknown[] = [file];
  while (stack.length > 0) {
    const node = stack.pop();
    if (node === null || typeof node !== "object") continue;
    if (Array.isArray(node)) {
      stack.push(...node);
      continue;
    }
    const typed = node as {
      type?: unknown;
      value?: unknown;
      span?: { start: number; end: number };
    };
    if (
      (typed.type === "Lit" || typed.type === "SglQuoted") && typeof typed.value === "string" &&
      typed.value.includes("\r") && typed.span !== undefined
    ) {
      kept.push(typed.span);
    }
    for (const value of Object.values(node)) {
      if (value !== null && typeof value === "object") stack.push(value);
    }
  }
  kept.sort((a, b) => a.start - b.start);
  const bytes = encoder.encode(src.toWellFormed());
  let next = 0;
  let reach = -1; // end of the kept spans that start at or before the byte looked at
  for (let at = bytes.indexOf(CR); at !== -1; at = bytes.indexOf(CR, at + 1)) {
    while (next < kept.length && kept[next].start <= at) reach = Math.max(reach, kept[next++].end);
    if (at >= reach) return "carriage return outside quotes (bash reads it as part of a word)";
  }
  return null;
}
