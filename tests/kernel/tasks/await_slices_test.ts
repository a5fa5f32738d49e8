import assert from "node:assert/strict";
import { exec } from "../../_support/exec.ts";
import { withKernel } from "../../_support/kernel.ts";
import { memoryKiB } from "../../_support/proc.ts";
import type { RpcConnection } from "../../../src/protocol/rpc_client.ts";

/** `count` task.await of `task` with timeout_ms 1, 5,000 in flight at a time; all time out. */
async function timedOutWaits(conn: RpcConnection, task: unknown, count: number): Promise<void> {
  for (let done = 0; done < count; done += 5000) {
    const replies = await Promise.all(
      Array.from({ length: 5000 }, () => conn.request("task.await", { task, timeout_ms: 1 })),
    );
    assert.ok(replies.every((r) => (r as { timed_out: boolean }).timed_out));
  }
}

withKernel(
  "K-TASK-4 waits that time out leave nothing behind on the running task: 150,000 task.await with timeout_ms 1 (the facade's 1 s slices of 42 hours, M-PROG-1) grow the kernel < 64 MiB, where each one kept ~1.3 KiB until the task ended",
  async (conn, k) => {
    const { task } = await exec(conn, "sleep 600", { async: true });
    try {
      const pid = k.child.pid;
      await timedOutWaits(conn, task, 30_000); // the heap grows to its working size first
      const before = memoryKiB(pid).rss;
      await timedOutWaits(conn, task, 150_000);
      const growthMiB = (memoryKiB(pid).rss - before) / 1024;
      assert.ok(growthMiB < 64, `kernel RSS grew by ${growthMiB.toFixed(0)} MiB`);
    } finally {
      await conn.request("task.cancel", { task });
    }
  },
);
