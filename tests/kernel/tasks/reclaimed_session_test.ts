import assert from "node:assert/strict";
import { kernelTest } from "../../_support/kernel.ts";
import { exec } from "../../_support/exec.ts";
import type { Rec } from "../../_support/rec.ts";
import { rpcError } from "../../_support/rejection.ts";
import { waitUntil } from "../../_support/wait.ts";

kernelTest(
  "E-3/K-TASK-8 a reclaimed session's tasks go with it: the next session of that name lists none and every task method answers -32021 for them (not -32004 from task.await)",
  async (k) => {
    const first = await k.attach("s1");
    await exec(first, "export MARK=set");
    const { task } = await exec(first, "echo hello", { async: true });
    const done = await first.request("task.await", { task }) as Rec;
    assert.equal(done.state, "completed");
    first.close();
    // 64 other sessions in use: the first one, idle and not held, is reclaimed for the last
    const others = [];
    for (let i = 0; i < 64; i++) others.push(await k.attach(`other${i}`));
    for (const conn of others) conn.close();

    const next = await k.attach("s1");
    // a new session, not the old one kept (K-ATTACH-3: it starts from the kernel's environment)
    const mark = await exec(next, 'echo "mark:$MARK"');
    assert.deepEqual((mark.value as Rec).out, { $: "str", v: "mark:\n" });
    assert.ok(
      await waitUntil(
        async () => (await next.request("task.list", {}) as Rec[]).length === 0,
        5000,
      ),
      "the reclaimed session's task is listed in its successor",
    );
    for (const method of ["task.get", "task.await", "task.output", "task.cancel"]) {
      const e = await rpcError(next.request(method, { task }));
      assert.equal(e.code, -32021, method);
    }
  },
);
