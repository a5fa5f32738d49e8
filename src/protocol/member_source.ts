import {
  CLOSE_BRACE,
  CLOSE_BRACKET,
  closingQuote,
  OPEN_BRACE,
  OPEN_BRACKET,
  QUOTE,
} from "./json_depth.ts";

const COMMA = 0x2c;

function skipSpace(text: string, at: number): number {
  while (at < text.length) {
    const c = text.charCodeAt(at);
    if (c !== 0x20 && c !== 0x09 && c !== 0x0a && c !== 0x0d) break;
    at++;
  }
  return at;
}

/** Index just past the string literal that opens at `at` (in JSON that `JSON.parse` accepted). */
function stringEnd(text: string, at: number): number {
  return closingQuote(text, at) + 1;
}

/** Index just past the value that starts at `at`; a loop, not recursion, whatever the nesting. */
function valueEnd(text: string, at: number): number {
  const first = text.charCodeAt(at);
  if (first === QUOTE) return stringEnd(text, at);
  if (first !== OPEN_BRACE && first !== OPEN_BRACKET) {
    while (at < text.length) {
      const c = text.charCodeAt(at);
      if (c === COMMA || c === CLOSE_BRACE || c === CLOSE_BRACKET || skipSpace(text, at) > at) {
        break;
      }
      at++;
    }
    return at;
  }
  let depth = 0;
  while (true) {
    const c = text.charCodeAt(at);
    if (c === QUOTE) {
      at = stringEnd(text, at);
      continue;
    }
    if (c === OPEN_BRACE || c === OPEN_BRACKET) depth++;
    else if (c === CLOSE_BRACE || c === CLOSE_BRACKET) {
      depth--;
      if (depth === 0) return at + 1;
    }
    at++;
  }
}

/**
 * The source text of the last top-level member `name` (the one `JSON.parse` keeps) of `text`,
 * which must be a JSON object that `JSON.parse` accepted; undefined when there is none.
 */
export function memberSource(text: string, name: string): string | undefined {
  let found: string | undefined;
  let at = skipSpace(text, 0) + 1;
  while (true) {
    at = skipSpace(text, at);
    if (text.charCodeAt(at) === CLOSE_BRACE) return found;
    const keyEnd = stringEnd(text, at);
    const key = text.slice(at, keyEnd);
    const start = skipSpace(text, skipSpace(text, keyEnd) + 1);
    const end = valueEnd(text, start);
    if (key === JSON.stringify(name) || (key.includes("\\") && JSON.parse(key) === name)) {
      found = text.slice(start, end);
    }
    at = skipSpace(text, end);
    if (text.charCodeAt(at) === COMMA) at++;
  }
}
