// Page cursors past the end, as a client holding one of another task (or a stale one) sends them.
import assert from "node:assert/strict";
import { startKernel } from "../../_support/kernel.ts";
import { exec } from "../../_support/exec.ts";
import type { Rec } from "../../_support/rec.ts";

Deno.test({
  name:
    "K-TASK-7: task.output of a terminal task at a cursor past total ends the paging (eof, or an error) [ignored: needs a SPEC decision: K-TASK-7 answers such a cursor with empty data and next_cursor == cursor, and eof only when next_cursor == total, so on a finished task of 6 bytes cursor 7 gives eof:false, next_cursor:7 for ever and a client reading until eof (with a cursor of a longer task's output) never ends; value.get raw answers offset > total with -32005 (K-VAL-4)]",
  ignore: true,
  fn: async () => {
    const k = await startKernel();
    try {
      const conn = await k.attach();
      const t = await exec(conn, "printf 'ab€d'", { background: true });
      await conn.request("task.await", { task: t.task, timeout_ms: 30000 });
      let cursor = 7;
      for (let i = 0; i < 10; i++) {
        const chunk = await conn.request("task.output", { task: t.task, cursor }) as Rec;
        if (chunk.eof) return;
        cursor = chunk.next_cursor as number;
      }
      assert.fail("paging from cursor 7 never reached eof");
    } finally {
      await k.cleanup();
    }
  },
});
