/** A `pty.read` of any grid a program can draw fits one frame (K-PTY-3, K-PTY-8, W-FRAME-2). */
import assert from "node:assert/strict";
import { FRAME_LIMIT } from "../../../src/protocol/limits.ts";
import { startKernel } from "../../_support/kernel.ts";
import type { Rec } from "../../_support/rec.ts";
import { delay } from "../../_support/wait.ts";

/** UTF-8 bytes of `text`. */
const utf8Bytes = (text: string) => new TextEncoder().encode(text).length;

Deno.test("K-PTY-8/W-FRAME-2 a 1000×1000 screen whose cells each carry combining marks stays readable: each cell kept 12 UTF-16 units (34 UTF-8 bytes of U+20D0 marks), so the read's answer exceeded the 16 MiB frame and every pty.read of that PTY failed with -32603 response too large", async () => {
  const k = await startKernel();
  try {
    const conn = await k.attach();
    // 'a' and 11 marks of 3 bytes per cell, 500 full rows: 17 MB of screen text, then DONE
    const script = [
      "import sys, time",
      'row = ("a" + "\\u20d0" * 11) * 1000',
      'sys.stdout.write("\\r\\n".join([row] * 500) + "\\r\\nDONE")',
      "sys.stdout.flush()",
      "time.sleep(60)",
    ].join("\n");
    const opened = await conn.request("pty.open", {
      cmd: "python3",
      args: ["-c", script],
      cols: 1000,
      rows: 1000,
    }) as Rec;
    let screen: string[] = [];
    for (let i = 0; i < 300 && !screen.includes("DONE"); i++) {
      // before the fix, once enough rows are drawn, the read itself throws
      const read = await conn.request("pty.read", { pty_id: opened.pty_id }) as Rec;
      screen = read.screen as string[];
      if (!screen.includes("DONE")) await delay(50);
    }
    assert.ok(screen.includes("DONE"), "the program's last line is read");
    assert.ok(screen[0].startsWith("a\u20d0"), "a cell keeps its first marks");
    assert.equal(screen.slice(0, 500).every((row) => row === screen[0]), true);
    assert.ok(utf8Bytes(screen[0]) * 1000 < FRAME_LIMIT, "every row of marks would fit a frame");
    await conn.request("pty.close", { pty_id: opened.pty_id });
  } finally {
    await k.cleanup();
  }
});

Deno.test({
  name:
    "[needs SPEC decision K-PTY-1/K-PTY-6: a bound on `cmd`, or how a list or read too large for a frame answers] two PTYs whose argv are 1.8 MB of control characters each (10.8 MB of JSON escapes per `cmd`, under ARG_MAX) make every pty.list of their session fail with -32603 response too large: the session's human can no longer list its PTYs",
  ignore: true,
  fn: async () => {
    const k = await startKernel();
    try {
      const conn = await k.attach();
      const args = ["-c", "sleep 60", "sh", ...Array(14).fill("\x01".repeat(128000))];
      const ids: unknown[] = [];
      for (let i = 0; i < 2; i++) {
        ids.push((await conn.request("pty.open", { cmd: "sh", args }) as Rec).pty_id);
      }
      const listed = await conn.request("pty.list", {}) as Rec;
      assert.equal((listed.ptys as Rec[]).length, 2);
      for (const id of ids) await conn.request("pty.close", { pty_id: id });
    } finally {
      await k.cleanup();
    }
  },
});
