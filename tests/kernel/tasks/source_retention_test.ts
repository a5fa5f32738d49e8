import assert from "node:assert/strict";
import { kernelTest } from "../../_support/kernel.ts";
import { exec } from "../../_support/exec.ts";
import { memoryKiB } from "../../_support/proc.ts";
import type { Rec } from "../../_support/rec.ts";
import { delay, waitUntil } from "../../_support/wait.ts";

kernelTest(
  "K-TASK-1/K-TASK-2 a retained task keeps its cut cmd, not its source: 120 background tasks of 2 MB sources, never awaited, grow the kernel < 96 MiB (each cmd, 256 scalars cut from the source, kept the whole source alive: +258 MiB)",
  async (k) => {
    const conn = await k.attach();
    await exec(conn, "echo warm");
    await delay(3000); // the first run's garbage collected, as it is for what follows
    const before = memoryKiB(k.child.pid).rss;
    for (let i = 0; i < 120; i++) {
      await exec(conn, `true ${i} # ${"x".repeat(2_000_000)}`, { background: true });
    }
    // (their journal rows tell: a task.list would serialize, and so detach, each cmd)
    const done = async () =>
      (await conn.request("journal.query", { head: "true", limit: 1000 }) as Rec[])
        .filter((row) => row.ok === true).length === 120;
    assert.ok(await waitUntil(done, 30000), "every task completed");
    await delay(8000); // the kernel's idle collection and trim (daemon/idle_trim.ts)
    const grownMiB = (memoryKiB(k.child.pid).rss - before) / 1024;
    assert.ok(grownMiB < 96, `kernel RSS grew by ${grownMiB.toFixed(0)} MiB`);
  },
);
