/**
 * Where a source passes the parse budget: the parser's memory grows with the words and operators
 * of a source (up to about 1 KiB each), so counting them first keeps a 16 MiB source from
 * exhausting the heap of the thread that parses it.
 */

/** Code units that start a unit of their own (operators, expansions, line ends). */
const SINGLE = new Set(
  ["\n", ";", "|", "&", "$", "(", ")", "<", ">", "`"].map((c) => c.charCodeAt(0)),
);

/** Whether a code unit separates words. */
function blank(c: number): boolean {
  return c === 0x20 || c === 0x09 || c === 0x0d;
}

/**
 * The code-unit index at which `src` holds more than `limit` words and operators, or -1 when it
 * holds at most `limit`. A word is a maximal run of code units that are neither blank nor operators.
 */
export function passesParseBudget(src: string, limit: number): number {
  let units = 0;
  let inWord = false;
  for (let i = 0; i < src.length; i++) {
    const c = src.charCodeAt(i);
    const single = SINGLE.has(c);
    if (single || (!blank(c) && !inWord)) {
      if (++units > limit) return i;
    }
    inWord = !single && !blank(c);
  }
  return -1;
}
