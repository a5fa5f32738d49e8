/** Reading the listing bash's `declare -p` prints for all variables, byte for byte. */

const [NL, SPACE, DQ, SQ, DOLLAR, BACKSLASH, EQUALS] = [..."\n \"'$\\="].map((c) =>
  c.charCodeAt(0)
);

/** One statement of the listing: `declare -<flags> <name>[=<value>]`. */
export interface Declaration {
  /** The attribute letters (`-` alone: none), e.g. `ax` for an exported indexed array. */
  flags: string;
  name: string;
  /** The value as bash quoted it, or null when the variable is declared but unset. */
  value: Uint8Array | null;
  /** The whole statement, without its line break: what `declare -p <name>` prints. */
  text: Uint8Array;
}

/** The index just past the quote `q` that closes a quoted word whose text starts at `i`. */
function pastClosing(bytes: Uint8Array, i: number, q: number, escapes: boolean): number {
  for (; i < bytes.length; i++) {
    if (bytes[i] === q) return i + 1;
    if (escapes && bytes[i] === BACKSLASH) i++;
  }
  throw new Error("declare listing: unclosed quote");
}

/**
 * The index of the line break ending the statement that starts at `i` (or the end): line breaks
 * inside `'…'`, `"…"` or `$'…'`, or after a backslash, belong to a value.
 */
function statementEnd(bytes: Uint8Array, i: number): number {
  while (i < bytes.length) {
    const c = bytes[i];
    if (c === NL) return i;
    if (c === BACKSLASH) i += 2;
    else if (c === SQ) i = pastClosing(bytes, i + 1, SQ, false);
    else if (c === DQ) i = pastClosing(bytes, i + 1, DQ, true);
    else if (c === DOLLAR && bytes[i + 1] === SQ) i = pastClosing(bytes, i + 2, SQ, true);
    else i++;
  }
  return bytes.length;
}

const latin1 = new TextDecoder("latin1");
const PREFIX = "declare -";

/** The statements of a `declare -p` listing, in its order; throws on anything else. */
export function declarations(bytes: Uint8Array): Declaration[] {
  const out: Declaration[] = [];
  for (let start = 0; start < bytes.length;) {
    const end = statementEnd(bytes, start);
    const text = bytes.subarray(start, end);
    const flagsEnd = text.indexOf(SPACE, PREFIX.length);
    if (latin1.decode(text.subarray(0, PREFIX.length)) !== PREFIX || flagsEnd < 0) {
      throw new Error("declare listing: not a declare statement");
    }
    const equals = text.indexOf(EQUALS, flagsEnd);
    out.push({
      flags: latin1.decode(text.subarray(PREFIX.length, flagsEnd)),
      name: latin1.decode(text.subarray(flagsEnd + 1, equals < 0 ? text.length : equals)),
      value: equals < 0 ? null : text.subarray(equals + 1),
      text,
    });
    start = end + 1;
  }
  return out;
}

/** What a letter after a backslash in `$'…'` stands for, as bash's ANSI-C quoting writes it. */
const ANSI_C_ESCAPES = new Map(
  [..."abEfnrtv\\'"].map((
    c,
    i,
  ) => [c.charCodeAt(0), [7, 8, 27, 12, 10, 13, 9, 11][i] ?? c.charCodeAt(0)]),
);

/** The characters a backslash escapes inside `"…"` as bash's double quoting writes it. */
const DQ_ESCAPED = new Set([DQ, BACKSLASH, DOLLAR, "`".charCodeAt(0)]);

const OCTAL_0 = "0".charCodeAt(0);
const isOctal = (b: number | undefined) => b !== undefined && b >= OCTAL_0 && b < OCTAL_0 + 8;

/**
 * The bytes of one scalar value as `declare -p` quotes it: `"…"` (a backslash before `"`, `\`, `$`
 * or a backquote) or `$'…'` (ANSI-C escapes, other bytes as up to three octal digits).
 */
export function unquoted(word: Uint8Array): Uint8Array {
  const ansiC = word[0] === DOLLAR && word[1] === SQ;
  if (!ansiC && word[0] !== DQ) throw new Error("declare listing: unquoted value");
  const close = ansiC ? SQ : DQ;
  const out = new Uint8Array(word.length);
  let n = 0;
  let i = ansiC ? 2 : 1;
  for (; i < word.length && word[i] !== close; i++) {
    const b = word[i];
    if (b !== BACKSLASH) {
      out[n++] = b;
    } else if (!ansiC) {
      out[n++] = DQ_ESCAPED.has(word[i + 1]) ? word[++i] : b;
    } else if (isOctal(word[i + 1])) {
      let code = 0;
      for (let d = 0; d < 3 && isOctal(word[i + 1]); d++) code = code * 8 + word[++i] - OCTAL_0;
      out[n++] = code;
    } else {
      const escaped = ANSI_C_ESCAPES.get(word[++i]);
      if (escaped === undefined) throw new Error("declare listing: unknown escape");
      out[n++] = escaped;
    }
  }
  if (i !== word.length - 1) throw new Error("declare listing: not one quoted value");
  return out.subarray(0, n);
}
