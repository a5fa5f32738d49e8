/**
 * Bounds what a PTY's program makes the kernel's emulator hold to what its grid shows (K-PTY-8).
 * Left alone, @xterm/headless appends every zero-width character to the text of the cell before
 * it without limit (`a` and 100 M combining accents made one cell of 200 MB, built one string
 * concatenation at a time: gigabytes of heap and minutes of a busy kernel), keeps each hyperlink's
 * URI (OSC 8, up to 10 MB each) while its text is on the screen, and keeps each window title
 * (OSC 0/1/2) and a stack of ten more, and up to 10 M characters of an unended DECRQSS. A
 * `pty.read` shows none of them: the screen is text.
 * It also does the work of a count once per unit, whatever the grid: `ESC [ 2147483647 S` (scroll
 * up) spliced rows two billion times (hours of a kernel answering nobody), the same count of REP
 * (`ESC [ n b`) allocated 8 GiB and one of CBT (`ESC [ n Z`) took minutes; counts past what the
 * grid can show are cut to one that leaves the same grid.
 */
import type xterm from "@xterm/headless";

type Terminal = InstanceType<typeof xterm.Terminal>;

/**
 * Most bytes one cell's text takes in a `pty.read` answer (UTF-8, as JSON encodes it);
 * zero-width characters past it are dropped. A base character and its marks fit (the emulator
 * gives each emoji of a ZWJ sequence its own cell), V8 keeps a string this short flat (one small
 * string per cell, never a chain of concatenations), and a read of the largest grid, 1000 rows of
 * 1000 such cells, fits one frame (W-FRAME-2): at 12 UTF-16 units a cell took up to 34 bytes,
 * and a 1000×1000 screen of marks made every `pty.read` of its PTY fail as too large.
 */
export const CELL_TEXT_BYTES = 16;

/** The emulator's row of cells (@xterm/headless 6.0.0 internals, pinned in deno.json). */
interface BufferLine {
  _data: Uint32Array;
  _combined: Record<number, string>;
  addCodepointToCell(index: number, codePoint: number, width: number): void;
}

/** The bit of a cell's first word saying its text is in `_combined` (CONTENT_IS_COMBINED_MASK). */
const COMBINED = 0x200000;
/** The bits of a cell's first word holding its one code point (CONTENT_CODEPOINT_MASK). */
const CODEPOINT = 0x1fffff;

/** The row prototypes already bounded. */
const bounded = new WeakSet<object>();

/** Bytes of code point `cp` in a JSON answer: escaped where JSON escapes it, else UTF-8. */
function encodedBytes(cp: number): number {
  if (cp < 0x20 || (cp >= 0xd800 && cp <= 0xdfff)) return 6; // \u00XX, a lone surrogate's \uDXXX
  if (cp === 0x22 || cp === 0x5c) return 2;
  if (cp < 0x80) return 1;
  if (cp < 0x800) return 2;
  return cp < 0x10000 ? 3 : 4;
}

/** Bytes of the text of cell `index` of `line` in a JSON answer (see {@link encodedBytes}). */
function cellBytes(line: BufferLine, index: number): number {
  const content = line._data[index * 3];
  if ((content & COMBINED) === 0) {
    return (content & CODEPOINT) === 0 ? 0 : encodedBytes(content & CODEPOINT);
  }
  let bytes = 0;
  for (const ch of line._combined[index]) bytes += encodedBytes(ch.codePointAt(0)!);
  return bytes;
}

/** Bounds the text a cell of any row of `proto`'s class holds to {@link CELL_TEXT_BYTES}. */
function boundCellText(proto: BufferLine): void {
  if (bounded.has(proto)) return;
  bounded.add(proto);
  const add = proto.addCodepointToCell;
  proto.addCodepointToCell = function (this: BufferLine, index, codePoint, width) {
    if (cellBytes(this, index) + encodedBytes(codePoint) > CELL_TEXT_BYTES) return;
    add.call(this, index, codePoint, width);
  };
}

/**
 * OSC identifiers whose payload the emulator would keep: titles (0, 1, 2), hyperlinks (8), and
 * colour settings and queries (4, 10-12, 104, 110-112), held up to 10 M characters while unended
 * (8 PTYs that each left an OSC 4 open held 1.2 GB) for a palette a text screen never shows.
 */
const KEPT_OSC = [0, 1, 2, 4, 8, 10, 11, 12, 104, 110, 111, 112];

/** A CSI sequence's parameters as the emulator hands them to a handler. */
interface Params {
  params: Int32Array;
}

/** A handler of a CSI sequence (returns whether it handled it). */
type CsiHandler = (params: Params) => boolean;

/**
 * The emulator's CSI handlers that loop over their count, one row or one tab stop a turn, and
 * the most turns that change anything: scrolling, inserting or deleting more rows than there are
 * blanks every row all the same; moving past more tab stops than there are columns stays at the
 * edge.
 */
const COUNTED = {
  scrollUp: "rows",
  scrollDown: "rows",
  insertLines: "rows",
  deleteLines: "rows",
  cursorForwardTab: "cols",
  cursorBackwardTab: "cols",
} as const;

/** A DCS sequence's handler (@xterm/headless 6.0.0's DcsParser calls these). */
interface DcsHandler {
  hook(params: Params): void;
  put(data: Uint32Array, start: number, end: number): void;
  unhook(success: boolean): boolean;
}

/** DECRQSS, `ESC P $ q <setting> ESC \`: the one DCS the emulator answers. */
const STATUS_REQUEST = { intermediates: "$", final: "q" };
/** Most characters of a DECRQSS setting kept: its settings (`m`, `r`, ` q`, …) are a few. */
const STATUS_REQUEST_LIMIT = 32;

/** The emulator internals this module relies on besides {@link BufferLine}. */
interface EmulatorCore {
  buffer: { lines: { get(index: number): object } };
  _inputHandler:
    & {
      _parser: {
        clearOscHandler(ident: number): void;
        clearDcsHandler(id: typeof STATUS_REQUEST): void;
        registerDcsHandler(id: typeof STATUS_REQUEST, handler: DcsHandler): void;
      };
      requestStatusString(setting: string, params: Params): boolean;
    }
    & Record<keyof typeof COUNTED | "repeatPrecedingCharacter", CsiHandler>;
}

/**
 * Answers DECRQSS as the emulator does, keeping at most {@link STATUS_REQUEST_LIMIT} characters
 * of its setting: the emulator's own handler kept up to 10 M of an unended one (8 PTYs that
 * each left one open held 1.2 GB of the kernel).
 */
function boundStatusRequest(handler: EmulatorCore["_inputHandler"]): void {
  let setting = "";
  let over = false;
  handler._parser.clearDcsHandler(STATUS_REQUEST);
  handler._parser.registerDcsHandler(STATUS_REQUEST, {
    hook() {
      setting = "";
      over = false;
    },
    put(data, start, end) {
      if (over || setting.length + end - start > STATUS_REQUEST_LIMIT) {
        over = true;
        setting = "";
        return;
      }
      setting += String.fromCodePoint(...data.subarray(start, end));
    },
    unhook(success) {
      // an overlong setting is none the emulator knows: it gets the answer of an unknown one
      const asked = over ? "" : setting;
      setting = "";
      return success ? handler.requestStatusString(asked, { params: new Int32Array(0) }) : true;
    },
  });
}

function gcd(a: number, b: number): number {
  return b === 0 ? a : gcd(b, a % b);
}

/**
 * The count of a REP of `count` characters that leaves the same grid: once the repeats have
 * filled every row they only scroll rows of the same text, in a cycle of one row's worth of them
 * (`cols` narrow characters, `cols / 2` wide ones, so any common multiple of the two counts).
 */
export function repeatCount(count: number, cols: number, rows: number): number {
  const filled = cols * (rows + 2);
  if (count <= filled) return count;
  const wide = Math.max(1, Math.floor(cols / 2));
  const cycle = (cols * wide) / gcd(cols, wide);
  return filled + ((count - filled) % cycle);
}

/** Cuts the counts of `handler`'s looping sequences to what leaves the same grid. */
function boundCounts(handler: EmulatorCore["_inputHandler"], term: Terminal): void {
  // the parser hands each handler its own reset parameters: cutting them in place is safe
  for (const [name, most] of Object.entries(COUNTED) as [keyof typeof COUNTED, "rows" | "cols"][]) {
    const run = handler[name].bind(handler);
    handler[name] = (p) => {
      if (p.params[0] > term[most]) p.params[0] = term[most];
      return run(p);
    };
  }
  const repeat = handler.repeatPrecedingCharacter.bind(handler);
  handler.repeatPrecedingCharacter = (p) => {
    p.params[0] = repeatCount(p.params[0], term.cols, term.rows);
    return repeat(p);
  };
}

/** Makes `term` hold no more than its grid needs (see the module comment). */
export function boundEmulator(term: Terminal): void {
  const core = (term as unknown as { _core: EmulatorCore })._core;
  boundCellText(Object.getPrototypeOf(core.buffer.lines.get(0)) as BufferLine);
  // Removed, not overridden: every handler of an identifier collects the whole payload.
  for (const ident of KEPT_OSC) core._inputHandler._parser.clearOscHandler(ident);
  boundCounts(core._inputHandler, term);
  boundStatusRequest(core._inputHandler);
}
