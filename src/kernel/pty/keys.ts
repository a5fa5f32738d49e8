/** Encoding of `pty.send` input (K-PTY-2) and named keys (K-PTY-12) into bytes. */

import { invalidParams } from "../../protocol/errors.ts";
import { PTY_INPUT_LIMIT } from "../../protocol/limits.ts";

const ESC = "\x1b";

/** Keys whose bytes do not depend on the cursor-key mode, by lower-case name. */
const FIXED_KEYS: ReadonlyMap<string, string> = new Map([
  ["enter", "\r"],
  ["return", "\r"],
  ["cr", "\r"],
  ["newline", "\n"],
  ["lf", "\n"],
  ["tab", "\t"],
  ["backtab", `${ESC}[Z`],
  ["shift-tab", `${ESC}[Z`],
  ["escape", ESC],
  ["esc", ESC],
  ["backspace", "\x7f"],
  ["bs", "\x7f"],
  ["delete", `${ESC}[3~`],
  ["del", `${ESC}[3~`],
  ["insert", `${ESC}[2~`],
  ["ins", `${ESC}[2~`],
  ["space", " "],
  ["pageup", `${ESC}[5~`],
  ["pgup", `${ESC}[5~`],
  ["pagedown", `${ESC}[6~`],
  ["pgdn", `${ESC}[6~`],
  ["f1", `${ESC}OP`],
  ["f2", `${ESC}OQ`],
  ["f3", `${ESC}OR`],
  ["f4", `${ESC}OS`],
  ["f5", `${ESC}[15~`],
  ["f6", `${ESC}[17~`],
  ["f7", `${ESC}[18~`],
  ["f8", `${ESC}[19~`],
  ["f9", `${ESC}[20~`],
  ["f10", `${ESC}[21~`],
  ["f11", `${ESC}[23~`],
  ["f12", `${ESC}[24~`],
]);

/** Cursor keys: the final byte, sent as `ESC [ x` normally and `ESC O x` in DECCKM mode. */
const CURSOR_KEYS: ReadonlyMap<string, string> = new Map([
  ["up", "A"],
  ["down", "B"],
  ["right", "C"],
  ["left", "D"],
  ["home", "H"],
  ["end", "F"],
]);

/** Control characters for the non-letter `Ctrl-` keys. */
const CTRL_SYMBOLS: ReadonlyMap<string, string> = new Map([
  ["space", "\x00"],
  ["@", "\x00"],
  ["[", "\x1b"],
  ["\\", "\x1c"],
  ["]", "\x1d"],
  ["^", "\x1e"],
  ["_", "\x1f"],
  ["?", "\x7f"],
]);

/** The bytes (as a string of code units < 0x80) of a named key, or null if the name is unknown. */
function namedKeyBytes(name: string, appCursor: boolean): string | null {
  const key = name.toLowerCase();
  const fixed = FIXED_KEYS.get(key);
  if (fixed !== undefined) return fixed;
  const cursor = CURSOR_KEYS.get(key);
  if (cursor !== undefined) return (appCursor ? `${ESC}O` : `${ESC}[`) + cursor;
  const rest = key.startsWith("ctrl-") ? key.slice(5) : key.startsWith("c-") ? key.slice(2) : null;
  if (rest === null) return null;
  if (/^[a-z]$/.test(rest)) return String.fromCharCode(rest.charCodeAt(0) - 0x60);
  return CTRL_SYMBOLS.get(rest) ?? null;
}

const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}(?:==)?|[A-Za-z0-9+/]{3}=?)?$/;

function decodeBase64(text: string): Uint8Array {
  if (!BASE64.test(text)) throw invalidParams("input.bytes is not valid base64");
  if (Math.floor(text.length * 3 / 4) > PTY_INPUT_LIMIT + 2) {
    throw invalidParams(`input exceeds ${PTY_INPUT_LIMIT} bytes`);
  }
  const binary = atob(text);
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  return bytes;
}

function encodeItem(item: unknown, appCursor: boolean): Uint8Array {
  if (typeof item === "string") return new TextEncoder().encode(item);
  if (typeof item !== "object" || item === null) {
    throw invalidParams("input items must be strings, objects or arrays");
  }
  const fields = item as Record<string, unknown>;
  const present = (["text", "key", "bytes"] as const).filter((k) => Object.hasOwn(fields, k));
  if (present.length !== 1) {
    throw invalidParams("an input object needs exactly one of text, key or bytes");
  }
  const member = present[0];
  const value = fields[member];
  if (typeof value !== "string") throw invalidParams(`input.${member} must be a string`);
  if (member === "text") return new TextEncoder().encode(value);
  if (member === "bytes") return decodeBase64(value);
  const bytes = namedKeyBytes(value, appCursor);
  if (bytes === null) throw invalidParams(`unknown key: ${value}`, { key: value });
  return Uint8Array.from(bytes, (c) => c.charCodeAt(0));
}

/**
 * Encodes `pty.send` input: a string, `{text}`/`{key}`/`{bytes}`, or (nested) arrays of those,
 * concatenated in order. Throws `-32602` for malformed input, unknown keys, bad base64 or more
 * than {@link PTY_INPUT_LIMIT} bytes.
 */
export function encodePtyInput(input: unknown, appCursor: boolean): Uint8Array {
  const parts: Uint8Array[] = [];
  let total = 0;
  // An explicit stack (items in reverse order) so deeply nested arrays cannot overflow the call stack.
  const stack: unknown[] = [input];
  while (stack.length > 0) {
    const item = stack.pop();
    if (Array.isArray(item)) {
      for (let i = item.length - 1; i >= 0; i--) stack.push(item[i]);
      continue;
    }
    const bytes = encodeItem(item, appCursor);
    total += bytes.length;
    if (total > PTY_INPUT_LIMIT) throw invalidParams(`input exceeds ${PTY_INPUT_LIMIT} bytes`);
    parts.push(bytes);
  }
  const out = new Uint8Array(total);
  let offset = 0;
  for (const part of parts) {
    out.set(part, offset);
    offset += part.length;
  }
  return out;
}
