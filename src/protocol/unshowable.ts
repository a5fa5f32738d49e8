/**
 * Characters that would let text an agent chose pass for a reader's own lines or hide part of
 * itself: controls (line breaks and 8-bit C1 controls included), line and paragraph separators,
 * bidirectional overrides and isolates, zero-width characters.
 */
// deno-lint-ignore no-control-regex
export const UNSHOWABLE = /[\x00-\x1f\x7f-\x9f\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff]/g;

/** JSON text with every {@link UNSHOWABLE} character left in it written as a `\uXXXX` escape. */
export function terminalJson(json: string): string {
  return json.replace(UNSHOWABLE, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);
}
