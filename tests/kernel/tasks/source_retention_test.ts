import assert from "node:assert/strict";
import { kernelGrowthMiB, kernelTest } from "../../_support/kernel.ts";
import { exec } from "../../_support/exec.ts";
import type { Rec } from "../../_support/rec.ts";
import { waitUntil } from "../../_support/wait.ts";

kernelTest(
  "K-TASK-1/K-TASK-2 a retained task keeps its cut cmd, not its source: 120 background tasks of 2 MB sources, never awaited, grow the kernel < 96 MiB (each cmd, 256 scalars cut from the source, kept the whole source alive: +258 MiB)",
  async (k) => {
    const conn = await k.attach();
    const grownMiB = await kernelGrowthMiB(k, conn, 96, async () => {
      for (let i = 0; i < 120; i++) {
        await exec(conn, `true ${i} # ${"x".repeat(2_000_000)}`, { background: true });
      }
      // (their journal rows tell: a task.list would serialize, and so detach, each cmd)
      const done = async () =>
        (await conn.request("journal.query", { head: "true", limit: 1000 }) as Rec[])
          .filter((row) => row.ok === true).length === 120;
      assert.ok(await waitUntil(done, 30000), "every task completed");
    });
    assert.ok(grownMiB < 96, `kernel RSS grew by ${grownMiB.toFixed(0)} MiB`);
  },
);
