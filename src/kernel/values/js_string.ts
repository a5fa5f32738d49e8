import { isHighSurrogate, isLowSurrogate } from "../../protocol/utf8.ts";

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
