// CSI (ESC [ params intermediates final), OSC (ESC ] … BEL or ESC \, never spanning a newline),
// and the remaining ESC sequences (ESC, optional intermediates, one final byte).
// deno-lint-ignore no-control-regex
const ANSI = /\x1b(?:\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b\n]*(?:\x07|\x1b\\)|[ -/]*[0-~])/g;

/**
 * Removes ANSI escape sequences (CSI, OSC and two-byte ESC sequences) from a render (V-RENDER-2).
 * No sequence it removes contains `\n`, so line counts are unchanged.
 */
export function stripAnsi(text: string): string {
  return text.includes("\x1b") ? text.replace(ANSI, "") : text;
}
