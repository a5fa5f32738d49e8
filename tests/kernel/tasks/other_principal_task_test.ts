/**
 * K-TASK-2 / P-SBX-7: the tasks of a session shared by the local human and an agent. K-TASK-2
 * makes every task visible to every connection of the session, so a (sandboxed) agent reaches
 * the human's unconfined task too: K-TASK-5/6 signal its process group.
 */
import assert from "node:assert/strict";
import { exec } from "../../_support/exec.ts";
import { startKernelWithAgent } from "../../_support/kernel.ts";
import { dirAgent } from "../../_support/principals.ts";
import type { Rec } from "../../_support/rec.ts";

Deno.test({
  name:
    "K-TASK-2/P-SBX-7 an agent sharing the human's session cannot stop, suspend or cancel the human's task [ignored: needs a SPEC decision: K-TASK-2 makes tasks visible to every connection of the session and K-TASK-5/6 check no principal, so agent:t's task.suspend sent SIGSTOP and its task.cancel SIGTERM to the human's unconfined process group (a build or deploy stopped half way), while PTYs are reachable only by their opener and the human (K-PTY-7 as README describes it); scoping task.cancel/suspend/resume to the task's principal and the human, or not, is the SPEC's choice]",
  ignore: true,
  fn: async () => {
    const { kernel: k, token } = await startKernelWithAgent("agent:t", (box) => dirAgent(box.dir));
    try {
      const human = await k.attach("work");
      await exec(human, `cd ${k.box.dir}`);
      const { task } = await exec(human, "sleep 600", { async: true }) as Rec;
      const agent = await k.attach("work", token);
      let suspended: unknown = null;
      let cancelled: unknown = null;
      try {
        suspended = ((await agent.request("task.suspend", { task })) as Rec).state;
      } catch { /* refused */ }
      try {
        cancelled = ((await agent.request("task.cancel", { task })) as Rec).cancel_requested;
      } catch { /* refused */ }
      const state = ((await human.request("task.get", { task })) as Rec).state;
      await human.request("task.cancel", { task });
      assert.deepEqual({ suspended, cancelled, state }, {
        suspended: null,
        cancelled: null,
        state: "running",
      });
    } finally {
      await k.cleanup();
    }
  },
});
