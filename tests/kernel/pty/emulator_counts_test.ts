/**
 * A CSI count the emulator would loop over once per unit is cut to what leaves the same grid
 * (K-PTY-8): the screen and cursor are those of the uncut sequence.
 */
import assert from "node:assert/strict";
import xterm from "@xterm/headless";
import { boundEmulator } from "../../../src/kernel/pty/emulator_bounds.ts";
import { startKernel } from "../../_support/kernel.ts";
import type { Rec } from "../../_support/rec.ts";
import { delay } from "../../_support/wait.ts";
import { within } from "../../../src/protocol/within.ts";

type Terminal = InstanceType<typeof xterm.Terminal>;

function terminal(cols: number, rows: number, bounded: boolean): Terminal {
  const term = new xterm.Terminal({ cols, rows, scrollback: 0, allowProposedApi: true });
  if (bounded) boundEmulator(term);
  return term;
}

/** The grid text and cursor of `term` after `data`. */
async function after(term: Terminal, data: string): Promise<string> {
  await new Promise<void>((resolve) => term.write(data, resolve));
  const buffer = term.buffer.active;
  const rows: string[] = [];
  for (let y = 0; y < term.rows; y++) rows.push(buffer.getLine(y)?.translateToString(true) ?? "");
  const state = JSON.stringify({ rows, x: buffer.cursorX, y: buffer.cursorY });
  term.dispose();
  return state;
}

/** Modes a program may set before it repeats: plain, insert, no autowrap, a scroll region. */
const MODES = ["", "\x1b[4h", "\x1b[?7l", "\x1b[2;3r\x1b[3;1H"];

Deno.test("K-PTY-8 a REP count cut to the grid leaves the grid and cursor the uncut count leaves: narrow, wide and combined characters, insert mode, no autowrap, a scroll region", async () => {
  for (const [cols, rows] of [[1, 1], [2, 3], [5, 3], [6, 4], [7, 3]]) {
    const filled = cols * (rows + 2);
    for (const char of ["x", "日", "e\u0301"]) {
      for (const mode of MODES) {
        const cycle = cols * cols; // a multiple of the cycle repeatCount cuts by
        const past = [cycle, cycle + 1, 2 * cycle + cols - 1].map((n) => filled + n);
        for (
          const count of [...Array(2 * cols + 5).keys()].map((n) => filled - 2 + n).concat(past)
        ) {
          const data = `ab\r\n${mode}${char}\x1b[${count}b`;
          const label = `${cols}x${rows} ${JSON.stringify(mode + char)} REP ${count}`;
          assert.equal(
            await after(terminal(cols, rows, true), data),
            await after(terminal(cols, rows, false), data),
            label,
          );
        }
      }
    }
  }
});

Deno.test("K-PTY-8 a scroll, insert-line, delete-line or tab count cut to the rows or columns leaves the grid the uncut count leaves", async () => {
  for (const final of ["S", "T", "L", "M", "I", "Z"]) {
    for (const mode of MODES) {
      for (const count of [1, 3, 4, 5, 9, 40]) {
        const data = `1\r\n2\r\n3\r\n4\x1b[2;3H\x1bH\x1b[2;1H${mode}\x1b[${count}${final}z`;
        assert.equal(
          await after(terminal(5, 4, true), data),
          await after(terminal(5, 4, false), data),
          `${JSON.stringify(mode)} CSI ${count} ${final}`,
        );
      }
    }
  }
});

Deno.test("K-PTY-8 a PTY program's largest counts (2147483647) of REP, SU, SD, IL, DL, CHT and CBT keep no kernel busy: they left it answering nobody for hours (SU spliced rows two billion times), allocating 8 GiB (REP) or for minutes (CBT)", async () => {
  const k = await startKernel();
  try {
    const conn = await k.attach();
    // a kernel stuck in the emulator answers nothing for minutes: each wait is bounded, not each
    // request (a loaded machine may take seconds, the first pty.open loading the emulator too)
    const answer = (method: string, params: Rec): Promise<Rec | null> =>
      within(conn.request(method, params) as Promise<Rec>, 10_000);
    const seqs = ["b", "S", "T", "L", "M", "I", "Z"].map((f) => `x\\033[2147483647${f}`).join("");
    const script = `sleep 0.5; printf '${seqs}\\r\\nDONE'; sleep 100`;
    const opened = await answer("pty.open", { cmd: "sh", args: ["-c", script] });
    assert.ok(opened !== null, "pty.open was not answered");
    let screen: string[] = [];
    // a deadline, not 25 reads 100 ms apart: those gave the program ~2.5 s in all for its 0.5 s
    const deadline = Date.now() + 20_000;
    while (!screen.includes("DONE") && Date.now() < deadline) {
      const r = await answer("pty.read", { pty_id: opened.pty_id });
      if (r !== null) screen = r.screen as string[];
      if (!screen.includes("DONE")) await delay(100);
    }
    assert.ok(screen.includes("DONE"), `the kernel never showed DONE: ${JSON.stringify(screen)}`);
    await conn.request("pty.close", { pty_id: opened.pty_id });
  } finally {
    k.child.kill("SIGKILL"); // one stuck in the emulator would not see a SIGTERM
    await k.cleanup();
  }
});
