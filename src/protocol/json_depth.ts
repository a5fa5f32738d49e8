/** Character codes of JSON's string and structure delimiters. */
export const QUOTE = 0x22;
const BACKSLASH = 0x5c;
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
 * Whether `text` opens more than `limit` arrays or objects inside one another (brackets inside
 * strings do not count). A linear scan that builds nothing, so a frame nested too deeply is
 * refused before `JSON.parse` allocates one object per level; `text` need not be valid JSON.
 */
export function nestsDeeper(text: string, limit: number): boolean {
  let depth = 0;
  for (let at = 0; at < text.length; at++) {
    const c = text.charCodeAt(at);
    if (c === QUOTE) {
      at = closingQuote(text, at);
      if (at < 0) return false;
    } else if (c === OPEN_BRACE || c === OPEN_BRACKET) {
      if (++depth > limit) return true;
    } else if (c === CLOSE_BRACE || c === CLOSE_BRACKET) {
      depth--;
    }
  }
  return false;
}
