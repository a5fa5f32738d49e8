// CSI (ESC [ params intermediates final), OSC (ESC ] … BEL or ESC \, never spanning a newline),
// and the remaining ESC sequences (ESC, optional intermediates, one final byte); then the same in
// their 8-bit (C1) forms, which a UTF-8 terminal acts on too: CSI U+009B, OSC U+009D (ended by BEL,
// ESC \ or ST U+009C), and every other C1 control (the one-character form of a two-byte ESC one).
// An ESC that starts none of these (another ESC, a C1 control or a newline follows it) goes too:
// kept, it would join what follows once the sequence between them is removed (ESC ESC[31m red
// gave ESC r, a sequence of its own).
const ANSI =
  // deno-lint-ignore no-control-regex
  /\x1b(?:\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b\x9c\n]*(?:\x07|\x1b\\|\x9c)|[ -/]*[0-~])?|\x9b[0-?]*[ -/]*[@-~]|\x9d[^\x07\x1b\x9c\n]*(?:\x07|\x1b\\|\x9c)|[\x80-\x9f]/g;

/** Whether `text` holds the start of any sequence {@link ANSI} removes. */
// deno-lint-ignore no-control-regex
const INTRODUCER = /[\x1b\x80-\x9f]/;

/** Whether {@link stripAnsi} would change `text`: it holds an ESC or a C1 control. */
export function hasAnsi(text: string): boolean {
  return INTRODUCER.test(text);
}

/**
 * Removes ANSI escape sequences (CSI, OSC and two-byte ESC sequences, in their 7-bit and 8-bit
 * forms) from a render (V-RENDER-2). No sequence it removes contains `\n`, so line counts are
 * unchanged.
 */
export function stripAnsi(text: string): string {
  return hasAnsi(text) ? text.replace(ANSI, "") : text;
}
