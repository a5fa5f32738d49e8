/** Pretty JSON (two-space indent) of a value, as text items and previews show it. */
export function prettyJson(value: unknown): string {
  return JSON.stringify(value, null, 2) ?? "null";
}
