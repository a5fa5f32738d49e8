// A facade whose kernel does not answer for a while (stopped by SIGSTOP, as a debugger or a
// suspended machine leaves it) while an MCP task runs (M-TASKS-1).
import assert from "node:assert/strict";
import { RawFacade } from "../_support/facade.ts";
import { kernelPid } from "../_support/proc.ts";
import type { Rec } from "../_support/rec.ts";
import { sandbox } from "../_support/sandbox.ts";
import { pollUntil } from "../_support/wait.ts";

Deno.test("M-TASKS-1: tasks/cancel of a running task whose kernel is stopped answers the task cancelled after the kill grace, and the kernel cancels the run once it goes on; before, tasks/cancel waited for the kernel's task.cancel answer and did not answer at all while the kernel was stopped", async () => {
  const box = await sandbox();
  const facade = new RawFacade(box);
  try {
    await facade.request(1, "initialize", {
      protocolVersion: "2025-11-25",
      capabilities: {},
      clientInfo: { name: "raw", version: "0" },
    });
    const src = "sleep 35 # stopped kernel";
    const created = await facade.request(2, "tools/call", {
      name: "shoal_exec",
      arguments: { src },
      task: {},
    });
    const taskId = ((created.result as Rec).task as Rec).taskId;
    const kernel = kernelPid(box.socket());
    Deno.kill(kernel, "SIGSTOP");
    try {
      await facade.send({ jsonrpc: "2.0", id: 3, method: "tasks/cancel", params: { taskId } });
      // The kill grace (2000 ms) and a slice (1000 ms) bound the wait, with room to spare.
      const cancel = await facade.response(3, 15000);
      assert.equal((cancel.result as Rec | undefined)?.status, "cancelled", JSON.stringify(cancel));
    } finally {
      Deno.kill(kernel, "SIGCONT");
    }
    const get = await facade.request(4, "tasks/get", { taskId });
    assert.equal((get.result as Rec).status, "cancelled", "a terminal status stays");
    // The cancel sent while the kernel was stopped reaches the run once it goes on.
    await pollUntil(
      async () => {
        const jobs = await facade.request(crypto.randomUUID(), "resources/read", {
          uri: "shoal://jobs",
        });
        return ((jobs.result as Rec).structuredContent as Rec[]).find((j) => j.cmd === src);
      },
      (job) => job?.state === "cancelled",
      15000,
    );
  } finally {
    await facade.stop().catch(() => facade.kill());
    await box.cleanup();
  }
});
