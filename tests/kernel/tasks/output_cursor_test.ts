import assert from "node:assert/strict";
import { exec } from "../../_support/exec.ts";
import { withKernel } from "../../_support/kernel.ts";
import type { Rec } from "../../_support/rec.ts";
import { rpcError } from "../../_support/rejection.ts";

withKernel(
  "K-TASK-7/W-NUM-1 task.output takes a cursor JavaScript holds exactly (≤ 2^53-1), else -32602: a cursor of 1e21 was echoed as cursor and next_cursor 1e+21 (an exponent, W-NUM-1), one of 2^53+1 as 2^53",
  async (conn) => {
    const { task } = await exec(conn, "echo hi", { async: true });
    await conn.request("task.await", { task });
    for (const cursor of [1e21, 1e308, 2 ** 53]) {
      const e = await rpcError(conn.request("task.output", { task, cursor }));
      assert.equal(e.code, -32602, String(cursor));
    }
    const widest = await conn.request("task.output", {
      task,
      cursor: Number.MAX_SAFE_INTEGER,
    }) as Rec;
    assert.equal(widest.cursor, Number.MAX_SAFE_INTEGER);
    assert.equal(widest.next_cursor, Number.MAX_SAFE_INTEGER);
    assert.equal(widest.data, "");
    const first = await conn.request("task.output", { task }) as Rec;
    assert.deepEqual([first.data, first.next_cursor, first.eof], ["hi\n", 3, true]);
  },
);
