/** UTF-8 lengths and cuts of JS strings, shared by the kernel's values and both sides' bounds. */

/** Whether code unit `c` opens a surrogate pair. */
export function isHighSurrogate(c: number): boolean {
  return c >= 0xd800 && c <= 0xdbff;
}

/** Whether code unit `c` closes a surrogate pair. */
export function isLowSurrogate(c: number): boolean {
  return c >= 0xdc00 && c <= 0xdfff;
}

/** UTF-8 byte length of `s[start, end)` (a lone surrogate counts 3 bytes, as TextEncoder writes U+FFFD). */
export function utf8Length(s: string, start = 0, end = s.length): number {
  let n = 0;
  for (let i = start; i < end; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x80) n += 1;
    else if (c < 0x800) n += 2;
    else if (isHighSurrogate(c) && i + 1 < end && isLowSurrogate(s.charCodeAt(i + 1))) {
      n += 4;
      i++;
    } else n += 3;
  }
  return n;
}

/** The longest prefix of `s` whose UTF-8 encoding fits in `limit` bytes, cut at a scalar boundary. */
export function utf8Prefix(s: string, limit: number): string {
  let bytes = 0;
  let i = 0;
  while (i < s.length) {
    const step = isHighSurrogate(s.charCodeAt(i)) && isLowSurrogate(s.charCodeAt(i + 1)) ? 2 : 1;
    const size = utf8Length(s, i, i + step);
    if (bytes + size > limit) break;
    bytes += size;
    i += step;
  }
  return s.slice(0, i);
}

/** The longest suffix of `s` whose UTF-8 encoding fits in `limit` bytes, cut at a scalar boundary. */
export function utf8Suffix(s: string, limit: number): string {
  let bytes = 0;
  let i = s.length;
  while (i > 0) {
    const pair = i > 1 && isLowSurrogate(s.charCodeAt(i - 1)) &&
      isHighSurrogate(s.charCodeAt(i - 2));
    const step = pair ? 2 : 1;
    const size = utf8Length(s, i - step, i);
    if (bytes + size > limit) break;
    bytes += size;
    i -= step;
  }
  return s.slice(i);
}

/** `s` when it fits `limit` UTF-8 bytes, else its longest prefix that fits with `…` after it. */
export function cutUtf8(s: string, limit: number): string {
  if (s.length * 3 <= limit) return s;
  const head = utf8Prefix(s, limit);
  return head.length === s.length ? s : utf8Prefix(s, limit - 3) + "…";
}

/**
 * A UTF-8 decoder that keeps a leading U+FEFF: in output, sources and paths it is a character
 * like any other, and a chunk that happens to start with one must not lose it.
 */
export function utf8Decoder(fatal = false): TextDecoder {
  return new TextDecoder("utf-8", { fatal, ignoreBOM: true });
}
