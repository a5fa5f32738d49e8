/** UTF-8 byte length of a string, or of the compact JSON of any other value. */
export function byteLength(x: unknown): number {
  return new TextEncoder().encode(typeof x === "string" ? x : JSON.stringify(x)).length;
}

/**
 * A bash function `hex` printing its stdin as lowercase hex digits and a newline: `od`'s spacing
 * differs between GNU (Linux) and BSD (macOS), so it is removed.
 */
export const HEX = "hex() { od -An -v -tx1 | tr -d ' \\n'; echo; }";
