// K-TASK-6 [FIX] (D-FIX-10): task.suspend sends SIGSTOP to the task's process group and
// task.resume SIGCONT, so the children bash waits on stop too, not only bash. Unsandboxed (the
// local human); the sandboxed agent's case is in tests/kernel/sandbox.
import assert from "node:assert/strict";
import { withKernel } from "../../_support/kernel.ts";
import { exec } from "../../_support/exec.ts";
import { groupMembers, processLive, psField } from "../../_support/proc.ts";
import type { Rec } from "../../_support/rec.ts";
import { waitUntil } from "../../_support/wait.ts";

/** The state letter of `pid` (`ps` stat), or "gone". */
function procState(pid: number): string {
  return psField(pid, "stat")?.[0] ?? "gone";
}

withKernel(
  "K-TASK-6 suspend stops every process of the task's group (bash and the children it waits on), resume continues them all",
  async (conn) => {
    const task = (await exec(conn, "sleep 300 & sleep 300; wait", { async: true })).task as string;
    let members: number[] = [];
    assert.ok(
      await waitUntil(async () => {
        const pid = (await conn.request("task.get", { task }) as Rec).pid;
        if (typeof pid === "number") members = groupMembers(pid);
        return members.length >= 3;
      }, 10000),
      "bash and two sleeps",
    );
    try {
      assert.equal((await conn.request("task.suspend", { task }) as Rec).state, "suspended");
      assert.ok(
        await waitUntil(() => members.every((pid) => procState(pid) === "T"), 10000),
        `every process stops: ${members.map(procState)}`,
      );
      assert.equal((await conn.request("task.resume", { task }) as Rec).state, "running");
      assert.ok(
        await waitUntil(() => members.every((pid) => ["S", "R"].includes(procState(pid))), 10000),
        `every process continues: ${members.map(procState)}`,
      );
      await conn.request("task.cancel", { task });
      assert.ok(await waitUntil(() => members.every((pid) => !processLive(pid)), 10000));
    } finally {
      for (const pid of members.filter(processLive)) Deno.kill(pid, "SIGKILL");
    }
  },
);
