/**
 * Whether a PTY's grid text changed since the last look, for its `pty.N` events (K-PTY-13),
 * reading only the rows the emulator marked as touched. Each look read every row: 7-38 ms at
 * 1000×1000, one per 50 ms while the program drew, so four such PTYs whose programs changed one
 * character every 20 ms took 74% of a core (5% without the looks), and one session's sixteen
 * more than this machine's two. Every {@link FULL_EVERY_MS} a look reads every row anyway.
 */
import type xterm from "@xterm/headless";

type Terminal = InstanceType<typeof xterm.Terminal>;

/** Longest time in ms between looks that read every row. */
const FULL_EVERY_MS = 1000;

/** The emulator internals this module relies on (@xterm/headless 6.0.0, pinned in deno.json). */
interface EmulatorCore {
  _inputHandler: {
    onRequestRefreshRows(listener: (rows?: { start: number; end: number }) => void): unknown;
  };
}

/** The rows of one emulator touched since the last look, and their text then. */
export class GridWatch {
  readonly #row: (i: number) => string;
  readonly #rows: () => number;
  #text: string[] | null = null;
  #start = Infinity;
  #end = -1;
  #fullAt = -Infinity;

  /** Watches `term`, whose grid row `i` reads as `row(i)` and which has `rows()` rows. */
  constructor(term: Terminal, row: (i: number) => string, rows: () => number) {
    this.#row = row;
    this.#rows = rows;
    const core = (term as unknown as { _core: EmulatorCore })._core;
    core._inputHandler.onRequestRefreshRows((touched) => {
      if (touched === undefined) this.touchAll();
      else {
        this.#start = Math.min(this.#start, touched.start);
        this.#end = Math.max(this.#end, touched.end);
      }
    });
  }

  /** Counts every row as touched (a resize, the other buffer). */
  touchAll(): void {
    [this.#start, this.#end] = [0, Infinity];
  }

  /** Whether the grid's text differs from the last look's; the first look always differs. */
  changed(): boolean {
    const rows = this.#rows();
    const [start, end] = [this.#start, this.#end];
    this.#start = Infinity;
    this.#end = -1;
    const now = performance.now();
    if (this.#text === null || this.#text.length !== rows || now - this.#fullAt >= FULL_EVERY_MS) {
      const text = Array.from({ length: rows }, (_, i) => this.#row(i));
      const last = this.#text;
      const changed = last === null || last.length !== rows ||
        text.some((row, i) => row !== last[i]);
      [this.#text, this.#fullAt] = [text, now];
      return changed;
    }
    let changed = false;
    for (let i = Math.max(0, start); i <= Math.min(end, rows - 1); i++) {
      const row = this.#row(i);
      if (row !== this.#text[i]) [changed, this.#text[i]] = [true, row];
    }
    return changed;
  }
}
