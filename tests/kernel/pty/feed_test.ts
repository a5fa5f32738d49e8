import assert from "node:assert/strict";
import xterm from "@xterm/headless";
import { feedTerminal, scrolledOffRanges } from "../../../src/kernel/pty/feed.ts";

const { Terminal } = xterm;
type Terminal = InstanceType<typeof Terminal>;

function term(cols: number, rows: number): Terminal {
  return new Terminal({ cols, rows, scrollback: 0, allowProposedApi: true, logLevel: "off" });
}

/** Screen text, cursor and wrap flags: everything a reader of the grid can observe. */
function state(t: Terminal): string {
  const b = t.buffer.active;
  const lines = [];
  for (let i = 0; i < t.rows; i++) {
    const line = b.getLine(b.baseY + i);
    lines.push(`${line?.isWrapped ? "+" : " "}${line?.translateToString(true)}`);
  }
  return `${b.type} ${b.cursorX},${b.cursorY} ${JSON.stringify(t.modes)}\n${lines.join("\n")}`;
}

/** Deterministic pseudo-random numbers (xorshift), so a failure can be replayed. */
function rng(seed: number): () => number {
  let x = seed;
  return () => {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    return (x >>> 0) / 2 ** 32;
  };
}

const PIECES = [
  "y\r\n",
  "hello world\r\n",
  "a line long enough to wrap around an eighty column terminal and then some more text\r\n",
  "x",
  "\r",
  "\n",
  "\x1b[2J",
  "\x1b[H",
  "\x1b[5;10H",
  "\x1b[31mred\x1b[0m",
  "\x1b[3;8r",
  "\x1b[r",
  "\x1b[?1049h",
  "\x1b[?1049l",
  "\x1b]0;title\x07",
  "\x1b]0;unterminated title with\r\nlines\r\n",
  "\x07",
  "é",
  "\x1b[4h",
  "\x1b[4l",
  "\x1b[?7l",
  "\x1b[?7h",
  "\t",
];

function randomOutput(next: () => number, size: number, rows: number): Uint8Array {
  let s = "";
  while (s.length < size) {
    if (next() < 0.5) {
      // A flood of plain lines long enough to be skipped, next to every kind of sequence.
      const lines = Math.floor(next() * 4 * rows);
      for (let i = 0; i < lines; i++) s += `line ${i}${next() < 0.1 ? "" : "\r"}\n`;
    } else s += PIECES[Math.floor(next() * PIECES.length)];
  }
  return new TextEncoder().encode(s);
}

function writeAll(t: Terminal, bytes: Uint8Array): Promise<void> {
  return new Promise((r) => t.write(bytes, r));
}

Deno.test("feed: skipping scrolled-off text leaves screen, cursor and modes as a full parse does", async () => {
  const next = rng(0x5eed);
  for (let round = 0; round < 30; round++) {
    const cols = 20 + Math.floor(next() * 100);
    const rows = 2 + Math.floor(next() * 30);
    const full = term(cols, rows);
    const fed = term(cols, rows);
    try {
      for (let k = 0; k < 4; k++) {
        // Chunks split anywhere, also inside escape sequences and UTF-8 characters.
        const bytes = randomOutput(next, 20_000 + Math.floor(next() * 40_000), rows);
        const cut = Math.floor(next() * bytes.length);
        for (const chunk of [bytes.subarray(0, cut), bytes.subarray(cut)]) {
          await writeAll(full, chunk);
          feedTerminal(fed, chunk);
        }
        assert.equal(state(fed), state(full), `round ${round}, chunk ${k}, ${cols}x${rows}`);
      }
    } finally {
      full.dispose();
      fed.dispose();
    }
  }
});

Deno.test("feed: a flood of plain lines is mostly skipped, its last screen kept", () => {
  const rows = 24;
  const text = Array.from({ length: 20_000 }, (_, i) => `line ${i}\r\n`).join("");
  const bytes = new TextEncoder().encode(text);
  const ranges = scrolledOffRanges(bytes, rows);
  assert.equal(ranges.length, 1);
  const [start, end] = ranges[0];
  assert.ok(end - start > bytes.length * 0.9);
  const t = term(80, rows);
  try {
    feedTerminal(t, bytes);
    const screen = state(t).split("\n").slice(1).map((l) => l.trimEnd());
    assert.equal(screen[rows - 2], " line 19999");
    assert.equal(screen[0], " line 19977");
  } finally {
    t.dispose();
  }
});

Deno.test("feed: nothing is skipped without rows LFs on both sides, or before the first LF", () => {
  const enc = (s: string) => new TextEncoder().encode(s);
  assert.deepEqual(scrolledOffRanges(enc("a\r\n".repeat(5)), 3), []);
  assert.deepEqual(scrolledOffRanges(enc("a\r\n".repeat(7)), 3), [[3, 12]]);
  // An escape sequence splits the run: each side alone is too short.
  assert.deepEqual(scrolledOffRanges(enc("a\r\n".repeat(4) + "\x1b[H" + "a\r\n".repeat(4)), 3), []);
});

Deno.test("feed: nothing is skipped while an escape sequence is in progress", async () => {
  // A LF inside a CSI sequence is executed and the sequence goes on: the first letter after the
  // flood's start ends it, so "h" (set DECCKM) must not be replaced by the "l" that follows later.
  const rows = 5;
  const flood = "hello\r\n" + "x\r\n".repeat(3 * rows) + "line\r\n".repeat(2 * rows);
  const bytes = new TextEncoder().encode("\x1b[?1\n" + flood + "0".repeat(20_000));
  const full = term(40, rows);
  const fed = term(40, rows);
  try {
    await writeAll(full, bytes);
    feedTerminal(fed, bytes);
    assert.equal(full.modes.applicationCursorKeysMode, true);
    assert.equal(state(fed), state(full));
  } finally {
    full.dispose();
    fed.dispose();
  }
});
