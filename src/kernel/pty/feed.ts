/**
 * Feeds program output into the headless emulator synchronously, skipping plain text that scrolls
 * off the screen before anything shows it (the emulator keeps no scrollback, see pty.ts).
 *
 * The emulator's public `write` parses in 12 ms slices separated by timers and reports completion
 * through callbacks; parsing synchronously in bounded chunks lets the PTY reader decide when to
 * yield, and lets a reader see everything read so far without waiting for timers.
 */

import type xterm from "@xterm/headless";

type Terminal = InstanceType<typeof xterm.Terminal>;

/** The emulator internals this module relies on (@xterm/headless 6.0.0, pinned in deno.json). */
interface EmulatorCore {
  writeSync(data: Uint8Array): void;
  buffer: { scrollTop: number; scrollBottom: number };
  _inputHandler: { _parser: { currentState: number } };
}

const CR = 0x0d;
const LF = 0x0a;
/** Parser state "ground": no escape sequence or string is in progress. */
const GROUND = 0;
/** Chunks shorter than this are parsed as they are (scanning them would not pay off). */
const ELIDE_MIN_BYTES = 2 * 1024;

function plain(byte: number): boolean {
  return (byte >= 0x20 && byte <= 0x7e) || byte === CR || byte === LF;
}

/**
 * Ranges `[start, end)` of `bytes` whose parsing cannot change a `rows`-high screen that keeps no
 * scrollback, given that the parser is idle at `start`: each range holds only printable ASCII, CR and
 * LF, starts right after a LF, ends with CR LF, holds at least `rows` LFs (so the cursor ends on the
 * bottom row at column 0 whatever it started from), and is followed by plain text with at least
 * `rows` more LFs (which scroll away every line the range left). Replacing such a range by `rows`
 * CR LF pairs gives the same screen, cursor and modes.
 */
export function scrolledOffRanges(bytes: Uint8Array, rows: number): [number, number][] {
  const ranges: [number, number][] = [];
  let i = 0;
  while (i < bytes.length) {
    if (!plain(bytes[i])) {
      i++;
      continue;
    }
    const runStart = i;
    while (i < bytes.length && plain(bytes[i])) i++;
    const range = rangeInRun(bytes, runStart, i, rows);
    if (range) ranges.push(range);
  }
  return ranges;
}

/** The elidable range inside one plain run `[from, to)`, or null. */
function rangeInRun(
  bytes: Uint8Array,
  from: number,
  to: number,
  rows: number,
): [number, number] | null {
  // Start right after the first LF of the run (the UTF-8 decoder holds nothing there).
  let start = from;
  while (start < to && (start === 0 || bytes[start - 1] !== LF)) start++;
  // End right after a CR LF that comes before the last `rows` LFs of the run.
  let after = 0;
  let last = to;
  while (last > start && after < rows) {
    last--;
    if (bytes[last] === LF) after++;
  }
  if (after < rows) return null;
  let end = last - 1;
  while (end > start && !(bytes[end] === LF && bytes[end - 1] === CR)) end--;
  if (end <= start) return null;
  end++;
  let lines = 0;
  for (let k = start; k < end && lines < rows; k++) if (bytes[k] === LF) lines++;
  return lines >= rows ? [start, end] : null;
}

/** Parses `bytes` into `term` now, skipping what scrolls off unseen (see {@link scrolledOffRanges}). */
export function feedTerminal(term: Terminal, bytes: Uint8Array): void {
  const core = (term as unknown as { _core: EmulatorCore })._core;
  if (bytes.length < ELIDE_MIN_BYTES) {
    core.writeSync(bytes);
    return;
  }
  const rows = term.rows;
  let at = 0;
  for (const [start, end] of scrolledOffRanges(bytes, rows)) {
    core.writeSync(bytes.subarray(at, start));
    const idle = core._inputHandler._parser.currentState === GROUND;
    const fullRegion = core.buffer.scrollTop === 0 && core.buffer.scrollBottom === rows - 1;
    core.writeSync(idle && fullRegion ? blankLines(rows) : bytes.subarray(start, end));
    at = end;
  }
  core.writeSync(bytes.subarray(at));
}

const blankCache = new Map<number, Uint8Array>();

function blankLines(rows: number): Uint8Array {
  let lines = blankCache.get(rows);
  if (!lines) {
    lines = new TextEncoder().encode("\r\n".repeat(rows));
    if (blankCache.size > 64) blankCache.clear();
    blankCache.set(rows, lines);
  }
  return lines;
}

const ESC = 0x1b;
/** C1 CSI, which the emulator takes as `ESC [`. */
const CSI = 0x9b;
/**
 * Final bytes of the CSI sequences that may rework every cell of the grid: erase in display,
 * insert and delete lines, scroll, repeat, and mode changes (the alternate screen's clear).
 */
const HEAVY_CSI = new Set([..."JLMSTbhl"].map((c) => c.charCodeAt(0)));
/**
 * Most cells of grid work one slice of output may ask for: its heavy escape sequences (see
 * {@link heavyAt}) times the grid's cells. A reset (ESC c) rebuilds both buffers: 15-60 ms on a
 * 1000×1000 grid, and 32 KiB of output holds 16 K of them, so a slice keeps at most this many
 * cells' worth: one at 1000×1000, 520 at 80×24.
 */
const SLICE_CELLS = 1_000_000;

/**
 * Whether the escape sequence starting at `bytes[i]` (ESC or CSI) may rework the whole grid: a
 * reset, a screen alignment test (ESC #), or a CSI of {@link HEAVY_CSI}; one cut short counts.
 */
function heavyAt(bytes: Uint8Array, i: number): boolean {
  let j = i + 1;
  if (bytes[i] === ESC) {
    if (j >= bytes.length || bytes[j] === 0x63 || bytes[j] === 0x23) return true; // ESC c, ESC #
    if (bytes[j] !== 0x5b) return false; // other escapes: charsets, cursor saves, strings
    j++;
  }
  while (j < bytes.length && bytes[j] >= 0x20 && bytes[j] <= 0x3f) j++; // parameters, intermediates
  return j >= bytes.length || HEAVY_CSI.has(bytes[j]);
}

/**
 * Parses a prefix of `bytes` into `term` (as {@link feedTerminal} does) in slices holding a bounded
 * number of heavy escape sequences (see {@link SLICE_CELLS}), the first slice always, the next ones
 * until `until` (a `performance.now()` time) has passed; returns how many bytes it parsed.
 */
export function feedTerminalUntil(term: Terminal, bytes: Uint8Array, until: number): number {
  const perSlice = Math.max(1, Math.floor(SLICE_CELLS / (term.cols * term.rows)));
  let at = 0;
  do {
    let end = at;
    for (let heavy = 0; end < bytes.length; end++) {
      if (bytes[end] !== ESC && bytes[end] !== CSI) continue;
      if (heavyAt(bytes, end) && heavy++ === perSlice) break;
    }
    feedTerminal(term, bytes.subarray(at, end));
    at = end;
  } while (at < bytes.length && performance.now() < until);
  return at;
}
