// K-BASH-13/K-TASK-5: a cancel SIGTERMs the task's group and the sessions its descendants
// started (setsid) while bash lives; what that SIGTERM reached gets the SIGKILL too. A setsid
// child that ignored SIGTERM outlived its cancel when bash died of it: orphaned, it was no
// longer found among bash's descendants when the grace ended (probe67).
import assert from "node:assert/strict";
import { startKernel, withKernel } from "../../_support/kernel.ts";
import { exec } from "../../_support/exec.ts";
import { pidsMentioning } from "../../_support/proc.ts";
import type { Rec } from "../../_support/rec.ts";
import { waitUntil } from "../../_support/wait.ts";

withKernel(
  "K-BASH-13/K-TASK-5 a cancel whose SIGTERM reached a setsid child that ignores it SIGKILLs that child after the grace, though bash died of the SIGTERM and left it orphaned",
  async (conn) => {
    const marker = `305.${Date.now() % 100000}`;
    const { task } = await exec(
      conn,
      `setsid bash -c 'trap "" TERM; sleep ${marker}; :' & sleep 300`,
      { async: true },
    ) as Rec;
    try {
      assert.ok(await waitUntil(() => pidsMentioning(marker).length >= 2, 10000), "it started");
      await conn.request("task.cancel", { task });
      const done = await conn.request("task.await", { task, timeout_ms: 20000 }) as Rec;
      assert.equal(done.state, "cancelled");
      assert.ok(
        await waitUntil(() => pidsMentioning(marker).length === 0, 10000),
        `still running after the grace: ${pidsMentioning(marker)}`,
      );
    } finally {
      for (const pid of pidsMentioning(marker)) {
        try {
          Deno.kill(pid, "SIGKILL");
        } catch {
          // gone
        }
      }
    }
  },
);

Deno.test("G-SOCK-8/K-BASH-13 a kernel told to stop leaves no setsid child of a task running that ignored the SIGTERM its shutdown sent, though bash died of it", async () => {
  const k = await startKernel();
  const marker = `307.${Date.now() % 100000}`;
  try {
    const conn = await k.attach();
    await exec(conn, `setsid bash -c 'trap "" TERM; sleep ${marker}; :' & sleep 300`, {
      async: true,
    });
    assert.ok(await waitUntil(() => pidsMentioning(marker).length >= 2, 10000), "it started");
    assert.equal(await k.stop(), 0);
    assert.ok(
      await waitUntil(() => pidsMentioning(marker).length === 0, 5000),
      `still running after the kernel exited: ${pidsMentioning(marker)}`,
    );
  } finally {
    for (const pid of pidsMentioning(marker)) {
      try {
        Deno.kill(pid, "SIGKILL");
      } catch {
        // gone
      }
    }
    await k.cleanup();
  }
});
