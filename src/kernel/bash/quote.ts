/** `word` as one single-quoted bash word. */
export function quoted(word: string): string {
  return `'${word.replaceAll("'", `'\\''`)}'`;
}

const ANSI_ESCAPES: Record<string, string> = {
  a: "\x07",
  b: "\b",
  e: "\x1b",
  E: "\x1b",
  f: "\f",
  n: "\n",
  r: "\r",
  t: "\t",
  v: "\v",
  "\\": "\\",
  "'": "'",
  '"': '"',
  "?": "?",
};

/** Decodes the body of `$'…'`; null for escapes this decoder does not model. */
export function decodeAnsiC(raw: string): string | null {
  let out = "";
  for (let i = 0; i < raw.length; i++) {
    const ch = raw[i];
    if (ch !== "\\") {
      out += ch;
      continue;
    }
    const next = raw[++i];
    if (next === undefined) return null;
    if (next in ANSI_ESCAPES) {
      out += ANSI_ESCAPES[next];
      continue;
    }
    const hex = /^x([0-9a-fA-F]{1,2})/.exec(raw.slice(i));
    const octal = /^[0-7]{1,3}/.exec(raw.slice(i));
    if (hex) {
      out += String.fromCharCode(parseInt(hex[1], 16));
      i += hex[0].length - 1;
    } else if (octal) {
      out += String.fromCharCode(parseInt(octal[0], 8) & 0xff);
      i += octal[0].length - 1;
    } else {
      return null;
    }
  }
  return out;
}
