/**
 * Reading the listing bash's `declare -p` prints for all variables, byte for byte. The listing is
 * taken as a byte string (latin1: one character per byte), so scanning it is native string work
 * and every byte survives.
 */
import { decodeAnsiC } from "./quote.ts";

/** One statement of the listing: `declare -<flags> <name>[=<value>]`, as byte strings. */
export interface Declaration {
  /** The attribute letters (`-` alone: none), e.g. `ax` for an exported indexed array. */
  flags: string;
  name: string;
  /** The value as bash quoted it, or null when the variable is declared but unset. */
  value: string | null;
  /** The whole statement without its line break: what `declare -p <name>` prints. */
  text: string;
}

/**
 * A quote or a backslash, the only characters that can carry a line break into a value, or a line
 * break.
 */
const QUOTING_OR_END = /['"\\\n]/g;
const DQ_END = /["\\]/g;
const SQ_END = /['\\]/g;

/** The index just past the quote that closes the quoted text starting at `i` (`end`: its regex). */
function pastClosing(s: string, i: number, end: RegExp): number {
  end.lastIndex = i;
  for (let m = end.exec(s); m !== null; m = end.exec(s)) {
    if (m[0] !== "\\") return m.index + 1;
    end.lastIndex = m.index + 2;
  }
  throw new Error("declare listing: unclosed quote");
}

/**
 * The index of the line break ending the statement that starts at `i` (or the end): line breaks
 * inside `'…'`, `"…"` or `$'…'`, or after a backslash, belong to a value.
 */
function statementEnd(s: string, i: number): number {
  // One search finds the next quote or line break: looking for the line's end again after every
  // quoted word scanned the rest of the line each time, quadratic in a line of many words (a
  // million-element array's listing, 15 MB on one line, held the event loop for minutes).
  for (;;) {
    QUOTING_OR_END.lastIndex = i;
    const m = QUOTING_OR_END.exec(s);
    if (m === null) return s.length;
    const at = m.index;
    if (m[0] === "\n") return at;
    if (m[0] === "\\") i = at + 2;
    else if (m[0] === '"') i = pastClosing(s, at + 1, DQ_END);
    else if (at > i && s[at - 1] === "$") i = pastClosing(s, at + 1, SQ_END);
    else {
      i = s.indexOf("'", at + 1) + 1;
      if (i === 0) throw new Error("declare listing: unclosed quote");
    }
  }
}

const PREFIX = "declare -";
/** The attribute letters `declare -p` lists (`-` alone: none). */
const FLAGS = /^(?:-|[aAilnrtux]+)$/;
const NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
/** Where the text of a `"…"` word stops: its `"`, a `\`, or a `$` or backquote bash never leaves bare. */
const DQ_STOP = /["\\$`]/g;
/** A byte bash leaves out of an unquoted associative key: blanks, controls, quotes, expansions. */
// deno-lint-ignore no-control-regex
const NOT_BARE_KEY = /[\x00-\x20\x7f"'\\$`[\](){}<>;&|*?!#~^@]/;

/**
 * The index just past the one quoted word starting at `i` as bash's listing writes it: `"…"` with
 * every `"`, `\`, `$` and backquote escaped (so nothing in it expands), or `$'…'`; -1 otherwise.
 */
function pastWord(s: string, i: number): number {
  if (s[i] === '"') {
    DQ_STOP.lastIndex = i + 1;
    for (let m = DQ_STOP.exec(s); m !== null; m = DQ_STOP.exec(s)) {
      if (m[0] === '"') return m.index + 1;
      if (m[0] !== "\\") return -1;
      DQ_STOP.lastIndex = m.index + 2;
    }
    return -1;
  }
  if (!s.startsWith("$'", i)) return -1;
  try {
    return pastClosing(s, i + 2, SQ_END);
  } catch {
    return -1;
  }
}

/**
 * The index just past an array's `[key]=word` starting at `i` (the key a number, a word or bare),
 * its key and word, as written, added to `words`.
 */
function pastElement(s: string, i: number, words: string[]): number {
  if (s[i] !== "[") return -1;
  let close = pastWord(s, i + 1);
  if (close < 0) {
    close = s.indexOf("]", i + 1);
    if (close <= i + 1 || NOT_BARE_KEY.test(s.slice(i + 1, close))) return -1;
  }
  const end = s.startsWith("]=", close) ? pastWord(s, close + 2) : -1;
  if (end > 0) words.push(s.slice(i + 1, close), s.slice(close + 2, end));
  return end;
}

/**
 * The words of one value as `declare -p` writes it, as written (quoted): the value itself for a
 * quoted word, each key and word for `(` elements `)`; null when it is not such a value.
 */
export function valueWords(value: string): string[] | null {
  if (value[0] !== "(") return pastWord(value, 0) === value.length ? [value] : null;
  const words: string[] = [];
  let i = 1;
  while (value[i] === "[") {
    i = pastElement(value, i, words);
    if (i < 0) return null;
    if (value[i] === " ") i++;
  }
  return i === value.length - 1 && value[i] === ")" ? words : null;
}

/**
 * The statements of a `declare -p` listing (a byte string), in its order; throws on anything else,
 * and on any statement bash would not write (a name that is not one, more than one value, text
 * after the value, an expansion that is not escaped): a listing may come from a program of a
 * confined principal (a sandboxed exec can write its own dump), and a statement is restored by
 * sourcing it (P-SBX-7).
 */
export function declarations(listing: string): Declaration[] {
  const out: Declaration[] = [];
  for (let start = 0; start < listing.length;) {
    const end = statementEnd(listing, start);
    const text = listing.slice(start, end);
    const flagsEnd = text.indexOf(" ", PREFIX.length);
    if (!text.startsWith(PREFIX) || flagsEnd < 0) {
      throw new Error("declare listing: not a declare statement");
    }
    const equals = text.indexOf("=", flagsEnd);
    const declaration = {
      flags: text.slice(PREFIX.length, flagsEnd),
      name: text.slice(flagsEnd + 1, equals < 0 ? text.length : equals),
      value: equals < 0 ? null : text.slice(equals + 1),
      text,
    };
    if (
      !FLAGS.test(declaration.flags) || !NAME.test(declaration.name) ||
      (declaration.value !== null && valueWords(declaration.value) === null)
    ) {
      throw new Error("declare listing: not a statement bash writes");
    }
    out.push(declaration);
    start = end + 1;
  }
  return out;
}

/**
 * The bytes (a byte string) of one scalar value as `declare -p` quotes it: `"…"` (a backslash
 * before `"`, `\`, `$` or a backquote) or `$'…'` (ANSI-C escapes, other bytes as up to three octal
 * digits).
 */
export function unquoted(word: string): string {
  if (word.startsWith('"') && word.endsWith('"') && word.length > 1) {
    const inner = word.slice(1, -1);
    if (!inner.includes("\\")) return inner;
    return inner.replace(/\\([\s\S])/g, (all, c) => '"\\$`'.includes(c) ? c : all);
  }
  if (!word.startsWith("$'") || !word.endsWith("'") || word.length < 3) {
    throw new Error("declare listing: not one quoted value");
  }
  const decoded = decodeAnsiC(word.slice(2, -1));
  if (decoded === null) throw new Error("declare listing: unknown escape");
  return decoded;
}
