/** Character codes of JSON's string and structure delimiters. */
export const QUOTE = 0x22;
export const BACKSLASH = 0x5c;
export const COMMA = 0x2c;
export const COLON = 0x3a;
export const OPEN_BRACE = 0x7b;
export const CLOSE_BRACE = 0x7d;
export const OPEN_BRACKET = 0x5b;
export const CLOSE_BRACKET = 0x5d;

/** Index of the quote closing the string literal that opens at `at`, or -1 when it is unclosed. */
export function closingQuote(text: string, at: number): number {
  let from = at + 1;
  while (true) {
    const quote = text.indexOf('"', from);
    if (quote < 0) return -1;
    let escapes = 0;
    while (text.charCodeAt(quote - 1 - escapes) === BACKSLASH) escapes++;
    if (escapes % 2 === 0) return quote;
    from = quote + 1;
  }
}

/**
 * Whether the UTF-8 JSON `bytes` open more than `limit` arrays or objects inside one another
 * (brackets inside strings do not count; no byte of a multi-byte character is ASCII). A linear
 * scan of the bytes that builds nothing, so a frame nested too deeply is refused before it is
 * decoded to a string or parsed; `bytes` need not be valid JSON or UTF-8.
 */
export function nestsDeeper(bytes: Uint8Array, limit: number): boolean {
  let depth = 0;
  for (let at = 0; at < bytes.length; at++) {
    const c = bytes[at];
    if (c === QUOTE) {
      // Skip to the closing quote: one preceded by an even run of backslashes.
      do {
        at = bytes.indexOf(QUOTE, at + 1);
        if (at < 0) return false;
        let escapes = 0;
        while (bytes[at - 1 - escapes] === BACKSLASH) escapes++;
        if (escapes % 2 === 0) break;
      } while (true);
    } else if (c === OPEN_BRACE || c === OPEN_BRACKET) {
      if (++depth > limit) return true;
    } else if (c === CLOSE_BRACE || c === CLOSE_BRACKET) {
      depth--;
    }
  }
  return false;
}
