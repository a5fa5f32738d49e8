import assert from "node:assert/strict";
import { startKernel } from "../../_support/kernel.ts";
import { pidsMentioning } from "../../_support/proc.ts";
import type { Rec } from "../../_support/rec.ts";
import { pollUntil } from "../../_support/wait.ts";

Deno.test({
  name:
    "K-BASH-13/K-TASK-3 a synchronous exec (no timeout_ms, no async) whose connection closes mid-run is either stopped or left visible and cancellable to the session [ignored: needs a SPEC decision: K-BASH-13 cancels on task.cancel, MCP cancellation and kernel shutdown only, and a plain synchronous exec has no task id, so probe67 saw `sleep 302.N` run on after its client closed the socket, absent from task.list of another connection of the session, and stoppable by no one but a kernel shutdown; decide whether a closed connection cancels its synchronous runs (as MCP cancellation does) or whether they become listed tasks]",
  ignore: true,
  fn: async () => {
    const k = await startKernel();
    try {
      const marker = `302.${Date.now() % 100000}`;
      const caller = await k.attach();
      const watcher = await k.attach();
      const run = caller.request("exec", { src: `sleep ${marker}` }).catch(() => null);
      await pollUntil(() => Promise.resolve(pidsMentioning(marker)), (p) => p.length > 0, 10000);
      caller.close();
      await run;
      const stopped = await pollUntil(
        async () => ({
          alive: pidsMentioning(marker).length > 0,
          listed: (await watcher.request("task.list", {}) as Rec[]).length > 0,
        }),
        (s) => !s.alive || s.listed,
        10000,
      ).catch(() => ({ alive: true, listed: false }));
      assert.ok(!stopped.alive || stopped.listed, "the run neither stopped nor was listed");
    } finally {
      await k.cleanup();
    }
  },
});
