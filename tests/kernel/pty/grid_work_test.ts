/** Escape sequences that rework a whole large grid keep no kernel busy for long (E-4, K-PTY-8). */
import assert from "node:assert/strict";
import { startKernel } from "../../_support/kernel.ts";
import type { Rec } from "../../_support/rec.ts";
import { answersWhileRunning } from "./_helpers.ts";

Deno.test("E-4/K-PTY-8 150 resets (ESC c, 300 bytes) on a 1000×1000 PTY leave the kernel answering other connections between them: each rebuilds both million-cell buffers (15-60 ms), and the reader parsed all it read at once, answering nobody meanwhile (1 answer in 9 s; 32 KiB of resets would take minutes); now one reset per slice, 35-37 answers", async () => {
  const k = await startKernel();
  try {
    const { conn, ptyId, answers } = await answersWhileRunning(
      k,
      "printf '\\033c%.0s' $(seq 150); printf DONE",
      1000,
      1000,
    );
    const read = await conn.request("pty.read", { pty_id: ptyId }) as Rec;
    assert.equal((read.screen as string[])[0], "DONE");
    // answers come between slices of the resets, each slice a reset
    assert.ok(answers >= 15, `${answers} answers while the program ran`);
    await conn.request("pty.close", { pty_id: ptyId });
  } finally {
    await k.cleanup();
  }
});
