/** UTF-8 byte length of a string, or of the compact JSON of any other value. */
export function byteLength(x: unknown): number {
  return new TextEncoder().encode(typeof x === "string" ? x : JSON.stringify(x)).length;
}
