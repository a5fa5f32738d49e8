/**
 * Characters that would let text an agent chose pass for a reader's own lines or hide part of
 * itself: controls (line breaks and 8-bit C1 controls included), line and paragraph separators,
 * bidirectional overrides and isolates, and every default-ignorable character, which a reader
 * sees as nothing (soft hyphen, fillers, zero-width characters, Mongolian and other variation
 * selectors, shorthand and musical format controls, tags, the unassigned ignorables). One outside
 * the BMP (U+1BCA0–1BCA3, U+1D173–1D17A, U+E0000–E0FFF) is matched as its surrogate pair.
 */
export const UNSHOWABLE =
  // deno-lint-ignore no-control-regex
  /[\x00-\x1f\x7f-\x9f\xad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180b-\u180f\u200b-\u200f\u2028-\u202e\u2060-\u206f\u3164\ufe00-\ufe0f\ufeff\uffa0\ufff0-\ufffb]|\ud82f[\udca0-\udca3]|\ud834[\udd73-\udd7a]|[\udb40-\udb43][\udc00-\udfff]/g;

/** JSON text with every {@link UNSHOWABLE} character left in it written as a `\uXXXX` escape. */
export function terminalJson(json: string): string {
  return json.replace(UNSHOWABLE, (c) => c.split("").map(unicodeEscape).join(""));
}

/** The code unit `u` (one character of a string) written as a JSON `\uXXXX` escape. */
export function unicodeEscape(u: string): string {
  return `\\u${u.charCodeAt(0).toString(16).padStart(4, "0")}`;
}
