/**
 * Line continuations bash reads otherwise than the parser (K-EFF-3). Bash removes every
 * backslash-newline before it tokenizes, in a double-quoted string and in an unquoted
 * here-document's body too, but mvdan-sh 0.10 does not join a `$` with what follows one
 * (`"$\⏎(cmd)"` is a command substitution to bash and text to the parser), and ends an unquoted
 * here-document only at its delimiter as one line (bash ends `cat <<EOF` at `E\⏎OF` and runs the
 * lines after it, which the parser took for the body). The analysis cannot follow such a source.
 */
import type { Redirect, Word } from "../bash/ast.ts";

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
 * Why bash may read `src` otherwise than its parsed tree says, given the tree's here-document
 * redirections; null when it cannot.
 */
export function continuationReason(src: string, heredocs: readonly Redirect[]): string | null {
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
