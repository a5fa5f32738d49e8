import {
  CLOSE_BRACE,
  CLOSE_BRACKET,
  closingQuote,
  OPEN_BRACE,
  OPEN_BRACKET,
  QUOTE,
} from "./json_depth.ts";

const COMMA = 0x2c;
const COLON = 0x3a;

function skipSpace(text: string, at: number): number {
  while (at < text.length) {
    const c = text.charCodeAt(at);
    if (c !== 0x20 && c !== 0x09 && c !== 0x0a && c !== 0x0d) break;
    at++;
  }
  return at;
}

/** Index just past the string literal that opens at `at`, or -1 when it is unclosed. */
function stringEnd(text: string, at: number): number {
  const close = closingQuote(text, at);
  return close < 0 ? -1 : close + 1;
}

/**
 * Index just past the value that starts at `at`, or -1 when the text ends inside it; a loop, not
 * recursion, whatever the nesting.
 */
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
  while (at < text.length) {
    const c = text.charCodeAt(at);
    if (c === QUOTE) {
      at = stringEnd(text, at);
      if (at < 0) return -1;
      continue;
    }
    if (c === OPEN_BRACE || c === OPEN_BRACKET) depth++;
    else if (c === CLOSE_BRACE || c === CLOSE_BRACKET) {
      depth--;
      if (depth === 0) return at + 1;
    }
    at++;
  }
  return -1;
}

/**
 * The source text of the last top-level member `name` (the one `JSON.parse` keeps) of `text`, a
 * JSON object; undefined when there is none. Text that is not JSON (cut short, say) is read as
 * far as it goes: the members found before it breaks off count.
 */
export function memberSource(text: string, name: string): string | undefined {
  const literal = JSON.stringify(name);
  // Only such a name has no other spelling but by `\u` escapes (see below).
  const plainName = /^[A-Za-z0-9_]+$/.test(name);
  let found: string | undefined;
  let at = skipSpace(text, 0) + 1;
  while (at < text.length) {
    at = skipSpace(text, at);
    if (text.charCodeAt(at) !== QUOTE) return found;
    const keyEnd = stringEnd(text, at);
    if (keyEnd < 0) return found;
    const key = text.slice(at, keyEnd);
    const colon = skipSpace(text, keyEnd);
    if (text.charCodeAt(colon) !== COLON) return found;
    const start = skipSpace(text, colon + 1);
    const end = valueEnd(text, start);
    if (end <= start) return found;
    if (key === literal || (key.includes("\\") && sameKey(key, name))) {
      found = text.slice(start, end);
      // No later member can be `name` when the rest holds neither its literal nor a `\u` escape
      // (a key spelled otherwise needs one: no short escape stands for a letter, digit or `_`),
      // so the rest of a long frame is not scanned.
      if (
        plainName && text.indexOf(literal, end) === -1 && text.indexOf("\\u", end) === -1
      ) return found;
    }
    at = skipSpace(text, end);
    if (text.charCodeAt(at) !== COMMA) return found;
    at++;
  }
  return found;
}

/** Whether the escaped key literal `key` names `name` (false when it is no JSON string). */
function sameKey(key: string, name: string): boolean {
  try {
    return JSON.parse(key) === name;
  } catch {
    return false;
  }
}
