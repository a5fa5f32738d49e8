import assert from "node:assert/strict";
import { kernelGrowthMiB, kernelTest } from "../../_support/kernel.ts";
import { exec } from "../../_support/exec.ts";
import type { Rec } from "../../_support/rec.ts";

kernelTest(
  "K-TASK-2/K-TASK-7 a retained task keeps its output in the CAS, not in memory: 16 background tasks of 8 MB stdout each grow the kernel < 40 MiB, and task.output still reads it (each task held the whole stdout its run had read back for JSON conversion: +157 MiB for 20)",
  async (k) => {
    const conn = await k.attach();
    const tasks: string[] = [];
    const grownMiB = await kernelGrowthMiB(k, conn, 40, async () => {
      for (let i = 0; i < 16; i++) {
        const { task } = await exec(conn, `head -c 8000000 /dev/zero | tr '\\0' x; echo ${i}`, {
          async: true,
        });
        await conn.request("task.await", { task, elide: { max_bytes: 100 } });
        tasks.push(task as string);
      }
    });
    assert.ok(grownMiB < 40, `kernel RSS grew by ${grownMiB.toFixed(0)} MiB`);
    const tail = await conn.request("task.output", {
      task: tasks[15],
      cursor: 7_999_998,
    }) as Rec;
    assert.deepEqual([tail.data, tail.total, tail.eof], ["xx15\n", 8_000_003, true]);
  },
);
