/**
 * Resizes the headless emulator with its view inside its buffer. With no scrollback (pty.ts),
 * @xterm/headless 6.0.0's reflow of a narrowed screen whose lines rewrap into more rows than it
 * has leaves the view's first line (`ybase`) past the buffer's last full screen: the buffer is a
 * ring, so the view's bottom rows wrapped around to its top, the cursor's row showed a line
 * already scrolled off, and the program's next output landed a row off (K-PTY-9). Narrowed, it
 * cuts the rows of the normal buffer only (which it reflows): the alternate screen of vi, less or
 * top kept every row's old cells past the new width, so reads showed rows longer than the grid
 * (K-PTY-8), the program's erase to end of line stopped short of them, and widening again brought
 * the old text back.
 */
import type xterm from "@xterm/headless";

type Terminal = InstanceType<typeof xterm.Terminal>;

/** One row of a buffer: its width, and its resize (the fill cell is used only to widen). */
interface BufferLine {
  length: number;
  resize(cols: number, fill: unknown): void;
}

/** One of the emulator's buffers (@xterm/headless 6.0.0 internals, pinned in deno.json). */
interface Buffer {
  /** The buffer line shown as the grid's top row. */
  ybase: number;
  /** The line scrolled to (the top row too, while nothing scrolls the viewport). */
  ydisp: number;
  lines: { length: number; get(index: number): BufferLine | undefined };
  getNullCell(): unknown;
}

/** The emulator internals this module relies on besides {@link Buffer}. */
interface EmulatorCore {
  buffers: { normal: Buffer; alt: Buffer };
}

/** Resizes `term` to `cols` × `rows`: its grid the last `rows` lines of each buffer at most, none wider than `cols`. */
export function resizeEmulator(term: Terminal, cols: number, rows: number): void {
  term.resize(cols, rows);
  const { buffers } = (term as unknown as { _core: EmulatorCore })._core;
  for (const buffer of [buffers.normal, buffers.alt]) {
    const top = Math.max(0, buffer.lines.length - rows);
    if (buffer.ybase > top) buffer.ybase = top;
    if (buffer.ydisp > buffer.ybase) buffer.ydisp = buffer.ybase;
    for (let i = 0; i < buffer.lines.length; i++) {
      const line = buffer.lines.get(i);
      if (line !== undefined && line.length > cols) line.resize(cols, buffer.getNullCell());
    }
  }
}
