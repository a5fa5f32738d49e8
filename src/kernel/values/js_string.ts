/** UTF-8 byte length of `s[start, end)` (a lone surrogate counts 3 bytes, as TextEncoder writes U+FFFD). */
export function utf8Length(s: string, start = 0, end = s.length): number {
  let n = 0;
  for (let i = start; i < end; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x80) n += 1;
    else if (c < 0x800) n += 2;
    else if (c >= 0xd800 && c <= 0xdbff && i + 1 < end && isLowSurrogate(s.charCodeAt(i + 1))) {
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

/** Number of Unicode scalars (code points) in a string. */
export function scalarCount(s: string): number {
  let n = s.length;
  for (let i = 0; i + 1 < s.length; i++) {
    if (isHighSurrogate(s.charCodeAt(i)) && isLowSurrogate(s.charCodeAt(i + 1))) {
      n--;
      i++;
    }
  }
  return n;
}

/** The code unit index where scalar `k` starts (or `s.length` when the string is shorter). */
function scalarIndex(s: string, k: number, from = 0, fromScalar = 0): number {
  let i = from;
  for (let seen = fromScalar; seen < k && i < s.length; seen++) {
    i += isHighSurrogate(s.charCodeAt(i)) && isLowSurrogate(s.charCodeAt(i + 1)) ? 2 : 1;
  }
  return i;
}

/** Scalars `[a, b)` of a string (clamped). */
export function scalarSlice(s: string, a: number, b: number): string {
  const start = scalarIndex(s, a);
  return s.slice(start, scalarIndex(s, b, start, a));
}

function isHighSurrogate(c: number): boolean {
  return c >= 0xd800 && c <= 0xdbff;
}

function isLowSurrogate(c: number): boolean {
  return c >= 0xdc00 && c <= 0xdfff;
}
