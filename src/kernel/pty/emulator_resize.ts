/**
 * Resizes the headless emulator with its view inside its buffer. With no scrollback (pty.ts),
 * @xterm/headless 6.0.0's reflow of a narrowed screen whose lines rewrap into more rows than it
 * has leaves the view's first line (`ybase`) past the buffer's last full screen: the buffer is a
 * ring, so the view's bottom rows wrapped around to its top, the cursor's row showed a line
 * already scrolled off, and the program's next output landed a row off (K-PTY-9).
 */
import type xterm from "@xterm/headless";

type Terminal = InstanceType<typeof xterm.Terminal>;

/** One of the emulator's buffers (@xterm/headless 6.0.0 internals, pinned in deno.json). */
interface Buffer {
  /** The buffer line shown as the grid's top row. */
  ybase: number;
  /** The line scrolled to (the top row too, while nothing scrolls the viewport). */
  ydisp: number;
  lines: { length: number };
}

/** The emulator internals this module relies on besides {@link Buffer}. */
interface EmulatorCore {
  buffers: { normal: Buffer; alt: Buffer };
}

/** Resizes `term` to `cols` × `rows`, its grid the last `rows` lines of each buffer at most. */
export function resizeEmulator(term: Terminal, cols: number, rows: number): void {
  term.resize(cols, rows);
  const { buffers } = (term as unknown as { _core: EmulatorCore })._core;
  for (const buffer of [buffers.normal, buffers.alt]) {
    const top = Math.max(0, buffer.lines.length - rows);
    if (buffer.ybase > top) buffer.ybase = top;
    if (buffer.ydisp > buffer.ybase) buffer.ydisp = buffer.ybase;
  }
}
