import {
  BACKSLASH,
  CLOSE_BRACE,
  CLOSE_BRACKET,
  COLON,
  COMMA,
  OPEN_BRACE,
  OPEN_BRACKET,
  QUOTE,
} from "./json_depth.ts";

const MINUS = 0x2d;
const ZERO = 0x30;
const NINE = 0x39;
/** Most keys of one object whose uniqueness is checked (pairwise); more are not taken. */
const MAX_KEYS = 64;
/** Longest number text checked by conversion; a longer one is not taken. */
const MAX_NUMBER = 32;
/** Integers of at most this many digits are exact doubles that print as written. */
const EXACT_DIGITS = 15;

/** Escapes `JSON.stringify` writes with a backslash and one letter (`\"`, `\\`, `\b` …). */
const SHORT_ESCAPES = new Set([0x22, 0x5c, 0x62, 0x66, 0x6e, 0x72, 0x74]);
/** Control characters written as a short escape, never as `\u00XX`. */
const SHORT_CONTROLS = new Set([0x08, 0x09, 0x0a, 0x0c, 0x0d]);
const HEX_LOWER = "0123456789abcdef";

/**
 * End of the JSON value starting at `bytes[at]` if it is written exactly as
 * `JSON.stringify(JSON.parse(text))` writes it back and nests at most `nesting` levels, else -1.
 * Such a value can be copied into an outgoing frame without being parsed and re-encoded; -1 says
 * only "not shown canonical" (the text may still be valid JSON that merely reads differently, an
 * array-index key or a lone surrogate escape, which this check does not take).
 */
export function canonicalEnd(bytes: Uint8Array, at: number, nesting: number): number {
  /** Open containers: for each, the key ranges seen so far (objects) or null (arrays). */
  const open: (number[] | null)[] = [];
  while (true) {
    // A value at `at`.
    const c = bytes[at];
    if (c === OPEN_BRACE || c === OPEN_BRACKET) {
      if (open.length >= nesting) return -1;
      const isObject = c === OPEN_BRACE;
      open.push(isObject ? [] : null);
      at++;
      const close = isObject ? CLOSE_BRACE : CLOSE_BRACKET;
      if (bytes[at] === close) {
        open.pop();
        at++;
      } else {
        if (isObject) {
          at = objectKey(bytes, at, open[open.length - 1]!);
          if (at < 0) return -1;
        }
        continue;
      }
    } else if (c === QUOTE) {
      at = stringEnd(bytes, at);
    } else if (c === MINUS || (c >= ZERO && c <= NINE)) {
      at = numberEnd(bytes, at);
    } else {
      at = literalEnd(bytes, at);
    }
    if (at < 0) return -1;
    // After a value: close containers, or move to the next member.
    while (true) {
      if (open.length === 0) return at;
      const keys = open[open.length - 1];
      const d = bytes[at];
      if (d === COMMA) {
        at++;
        if (keys !== null) {
          at = objectKey(bytes, at, keys);
          if (at < 0) return -1;
        }
        break;
      }
      if (d !== (keys === null ? CLOSE_BRACKET : CLOSE_BRACE)) return -1;
      open.pop();
      at++;
    }
  }
}

/**
 * Reads `"key":` at `at` into `keys` (start and end of each), refusing a duplicate, an
 * array-index-like key (V8 orders those first) and more than {@link MAX_KEYS}; returns the index
 * of the member's value or -1.
 */
function objectKey(bytes: Uint8Array, at: number, keys: number[]): number {
  if (bytes[at] !== QUOTE) return -1;
  const first = bytes[at + 1];
  if (first >= ZERO && first <= NINE) return -1;
  const end = stringEnd(bytes, at);
  if (end < 0 || bytes[end] !== COLON || keys.length >= 2 * MAX_KEYS) return -1;
  const length = end - at;
  for (let k = 0; k < keys.length; k += 2) {
    if (keys[k + 1] - keys[k] === length && sameBytes(bytes, keys[k], at, length)) return -1;
  }
  keys.push(at, end);
  return end + 1;
}

function sameBytes(bytes: Uint8Array, a: number, b: number, length: number): boolean {
  for (let i = 0; i < length; i++) if (bytes[a + i] !== bytes[b + i]) return false;
  return true;
}

/** End of the canonical string literal at `at` (valid UTF-8, escapes as JSON.stringify writes them), or -1. */
function stringEnd(bytes: Uint8Array, at: number): number {
  at++;
  while (at < bytes.length) {
    const c = bytes[at];
    if (c === QUOTE) return at + 1;
    if (c < 0x20) return -1;
    if (c === BACKSLASH) {
      at = escapeEnd(bytes, at);
    } else if (c < 0x80) {
      at++;
    } else {
      at = utf8End(bytes, at);
    }
    if (at < 0) return -1;
  }
  return -1;
}

/** End of the escape at `at` if JSON.stringify writes that character so (`\n`, `\u001f`), else -1. */
function escapeEnd(bytes: Uint8Array, at: number): number {
  const e = bytes[at + 1];
  if (SHORT_ESCAPES.has(e)) return at + 2;
  // `\u00XX` for the other control characters, in lowercase hex.
  if (e !== 0x75 || bytes[at + 2] !== ZERO || bytes[at + 3] !== ZERO) return -1;
  const high = bytes[at + 4];
  const low = HEX_LOWER.indexOf(String.fromCharCode(bytes[at + 5]));
  if ((high !== ZERO && high !== ZERO + 1) || low < 0) return -1;
  return SHORT_CONTROLS.has((high - ZERO) * 16 + low) ? -1 : at + 6;
}

/** End of the well-formed UTF-8 sequence (no surrogate, none overlong) at `at`, or -1. */
function utf8End(bytes: Uint8Array, at: number): number {
  const c = bytes[at];
  let count: number;
  let min = 0x80;
  let max = 0xbf;
  if (c >= 0xc2 && c <= 0xdf) count = 1;
  else if (c >= 0xe0 && c <= 0xef) {
    count = 2;
    if (c === 0xe0) min = 0xa0;
    else if (c === 0xed) max = 0x9f;
  } else if (c >= 0xf0 && c <= 0xf4) {
    count = 3;
    if (c === 0xf0) min = 0x90;
    else if (c === 0xf4) max = 0x8f;
  } else return -1;
  const second = bytes[at + 1];
  if (!(second >= min && second <= max)) return -1;
  for (let i = 2; i <= count; i++) {
    const b = bytes[at + i];
    if (!(b >= 0x80 && b <= 0xbf)) return -1;
  }
  return at + count + 1;
}

/** End of the number at `at` if it is written as JSON.stringify writes its value, else -1. */
function numberEnd(bytes: Uint8Array, at: number): number {
  const end = jsonNumberEnd(bytes, at);
  if (end < 0) return -1;
  const negative = bytes[at] === MINUS;
  const digits = end - at - (negative ? 1 : 0);
  let integer = digits <= EXACT_DIGITS;
  for (let i = end - digits; integer && i < end; i++) {
    integer = bytes[i] >= ZERO && bytes[i] <= NINE;
  }
  // An exact integer prints as written unless it is -0 (written back as 0).
  if (integer) return negative && digits === 1 && bytes[end - 1] === ZERO ? -1 : end;
  if (end - at > MAX_NUMBER) return -1;
  const text = String.fromCharCode(...bytes.subarray(at, end));
  return String(Number(text)) === text ? end : -1;
}

/** End of the JSON number (by its grammar, whatever its value) at `at`, or -1. */
export function jsonNumberEnd(bytes: Uint8Array, at: number): number {
  if (bytes[at] === MINUS) at++;
  if (bytes[at] === ZERO) at++;
  else if (isDigit(bytes[at])) at = digitsEnd(bytes, at);
  else return -1;
  if (bytes[at] === 0x2e) {
    if (!isDigit(bytes[++at])) return -1;
    at = digitsEnd(bytes, at);
  }
  if (bytes[at] === 0x65 || bytes[at] === 0x45) {
    at++;
    if (bytes[at] === 0x2b || bytes[at] === MINUS) at++;
    if (!isDigit(bytes[at])) return -1;
    at = digitsEnd(bytes, at);
  }
  return at;
}

function isDigit(c: number): boolean {
  return c >= ZERO && c <= NINE;
}

function digitsEnd(bytes: Uint8Array, at: number): number {
  while (isDigit(bytes[at])) at++;
  return at;
}

const LITERALS = ["true", "false", "null"].map((w) => Uint8Array.from(w, (ch) => ch.charCodeAt(0)));

/** End of `true`, `false` or `null` at `at`, or -1. */
function literalEnd(bytes: Uint8Array, at: number): number {
  for (const word of LITERALS) {
    if (bytes[at] === word[0] && holdsAt(bytes, at, word)) return at + word.length;
  }
  return -1;
}

/** Whether `bytes` hold `word` at `at`. */
export function holdsAt(bytes: Uint8Array, at: number, word: Uint8Array): boolean {
  for (let i = 0; i < word.length; i++) if (bytes[at + i] !== word[i]) return false;
  return true;
}
