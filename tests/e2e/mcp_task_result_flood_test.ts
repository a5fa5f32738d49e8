// M-TASKS-1 under a client that polls tasks/result and gives up: each tasks/result it cancels
// (notifications/cancelled, as the SDK client sends on its request timeout) must leave nothing
// behind on the running task it waited for.
import assert from "node:assert/strict";
import { rssBytes } from "../_support/proc.ts";
import type { Rec } from "../_support/rec.ts";
import { withRawFacade } from "../_support/facade.ts";
import { waitUntil } from "../_support/wait.ts";

/** Requests cancelled per round, and the growth of the facade they may leave, in MiB. */
const ROUNDS = 40_000;
const BOUND_MIB = 24;

Deno.test("M-TASKS-1 40,000 tasks/result of a running task, each cancelled by the client, leave the facade < 24 MiB larger: a cancelled wait leaves nothing on the task (it grew ~2.6 KiB per cancelled request, ~100 MiB here, kept until the task ended)", async () => {
  await withRawFacade(async (facade) => {
    const pid = facade.facadePid();
    const created = await facade.request("c", "tools/call", {
      name: "shoal_exec",
      arguments: { src: "sleep 300" },
      task: {},
    });
    const taskId = ((created.result as Rec).task as Rec).taskId;
    try {
      await facade.request("warm", "tasks/get", { taskId });
      const before = rssBytes(pid);
      let batch = "";
      for (let i = 0; i < ROUNDS; i++) {
        const id = `r${i}`;
        batch +=
          JSON.stringify({ jsonrpc: "2.0", id, method: "tasks/result", params: { taskId } }) +
          "\n" +
          JSON.stringify({
            jsonrpc: "2.0",
            method: "notifications/cancelled",
            params: { requestId: id },
          }) +
          "\n";
        if (batch.length > 1 << 20) {
          await facade.write(batch);
          batch = "";
        }
      }
      await facade.write(batch);
      const get = await facade.request("g", "tasks/get", { taskId });
      assert.equal((get.result as Rec).status, "working");
      // The heap is compacted once the facade falls idle (protocol/heap_compaction.ts).
      const growth = () => (rssBytes(pid) - before) / 2 ** 20;
      await waitUntil(() => growth() < BOUND_MIB, 15000);
      assert.ok(growth() < BOUND_MIB, `the facade grew ${growth().toFixed(1)} MiB`);
      assert.equal(facade.queued.some((f) => String((f as Rec).id).startsWith("r")), false);
    } finally {
      await facade.request("x", "tasks/cancel", { taskId });
    }
  });
});
