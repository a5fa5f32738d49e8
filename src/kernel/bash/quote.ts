/** `word` as one single-quoted bash word. */
export function quoted(word: string): string {
  return `'${word.replaceAll("'", `'\\''`)}'`;
}
