/**
 * The tree of a plain command without the bash parser (issue 33): a source that is one simple
 * command of plain words (`ls -la src`, `git status`, `true`) gets exactly the tree mvdan-sh's
 * conversion gives it (`parseBash`, K-PARSE-2), so a kernel answers such execs before it has loaded
 * the parser (about 110 ms and 20 MiB). Anything else is left to the parser.
 */
import type { File, Word } from "./ast_nodes.ts";

/**
 * One line of words made only of characters no shell rule treats specially in any position: no
 * quotes, expansions, globs, `=` (assignments), `~`, `#`, braces, operators or `\r`. Blank lines and
 * blanks may lead or trail it.
 */
const PLAIN = /^[ \t\n]*(?:[A-Za-z0-9_./:,+@%-]+(?:[ \t]+[A-Za-z0-9_./:,+@%-]+)*)?[ \t\n]*$/;

/** A plain word of {@link PLAIN} and where each starts. */
const WORD = /[A-Za-z0-9_./:,+@%-]+/g;

/**
 * First words the parser reads as something other than a call: reserved words, and the
 * declaration and `let` builtins it parses into their own clauses.
 */
const NOT_A_CALL = new Set([
  "case",
  "coproc",
  "declare",
  "do",
  "done",
  "elif",
  "else",
  "esac",
  "export",
  "fi",
  "for",
  "function",
  "if",
  "in",
  "let",
  "local",
  "nameref",
  "readonly",
  "select",
  "then",
  "time",
  "typeset",
  "until",
  "while",
]);

/** The tree of `src` when it is one plain command (or only blanks), else null: parse it fully. */
export function plainCommand(src: string): File | null {
  if (!PLAIN.test(src)) return null;
  const words: Word[] = [];
  for (const match of src.matchAll(WORD)) {
    const span = { start: match.index, end: match.index + match[0].length };
    words.push({
      type: "Word",
      span,
      parts: [{ type: "Lit", span: { ...span }, value: match[0] }],
      lit: match[0],
    });
  }
  const file: File = { type: "File", span: { start: 0, end: src.length }, stmts: [] };
  if (words.length === 0) return file;
  if (NOT_A_CALL.has(words[0].lit!)) return null;
  const span = { start: words[0].span.start, end: words[words.length - 1].span.end };
  file.stmts.push({
    type: "Stmt",
    span,
    cmd: { type: "CallExpr", span: { ...span }, assigns: [], args: words },
    negated: false,
    background: false,
    redirs: [],
  });
  return file;
}
