// M-TASKS-1 races through the real stack (SDK 1.32.2 client → shoal-mcp → autostarted kernel →
// bash): a tasks/cancel that meets the task's own end, checked against MCP 2025-11-25's task
// state machine (a terminal status never changes; the answer to tasks/cancel is the task
// cancelled, or -32602 when it was terminal already).
import assert from "node:assert/strict";
// @ts-types="@modelcontextprotocol/sdk/types"
import {
  CancelTaskResultSchema,
  CreateTaskResultSchema,
  GetTaskPayloadResultSchema,
  GetTaskResultSchema,
  McpError,
} from "@modelcontextprotocol/sdk/types.js";
import { KILL_GRACE_MS, SLICE_MS } from "../../src/protocol/limits.ts";
import { kernelPid, pidsMentioning, processLive } from "../_support/proc.ts";
import type { Rec } from "../_support/rec.ts";
import { delay, pollUntil, waitUntil } from "../_support/wait.ts";
import { RawFacade, withRawFacade } from "../_support/facade.ts";
import { sandbox } from "../_support/sandbox.ts";
import { connectMcp, type Mcp, mcpTest } from "./_mcp.ts";

/** Starts `src` as an MCP task; its taskId and kernel `task:N`. */
async function createTask(
  mcp: Mcp,
  src: string,
  onprogress?: (p: Rec) => void,
): Promise<{ taskId: string; kernel: string }> {
  const created = await mcp.client.request(
    { method: "tools/call", params: { name: "shoal_exec", arguments: { src }, task: {} } },
    CreateTaskResultSchema,
    onprogress ? { onprogress: (p) => onprogress(p as Rec) } : undefined,
  );
  return { taskId: created.task.taskId, kernel: String((created._meta as Rec)["shoal/task"]) };
}

/** The answer to tasks/cancel: the status it reports, or the JSON-RPC error code. */
async function cancelOutcome(mcp: Mcp, taskId: string): Promise<string | number> {
  try {
    const task = await mcp.client.request(
      { method: "tasks/cancel", params: { taskId } },
      CancelTaskResultSchema,
    );
    return task.status;
  } catch (e) {
    if (e instanceof McpError) return e.code;
    throw e;
  }
}

mcpTest(
  "tasks/cancel of a task whose bash already exited by itself (its output still draining, K-BASH-3) never answers a successful cancel with the status completed: the task ends completed, so the cancel is -32602 as for a terminal task (M-TASKS-1, MCP 2025-11-25: a cancel answer is the task cancelled, a terminal status never changes)",
  async (mcp) => {
    const marker = `sleep 30.${Deno.pid}3`;
    try {
      for (let round = 0; round < 4; round++) {
        // bash exits at once; its job holds stdout, so the kernel ends the task up to 500 ms later
        const { taskId, kernel } = await createTask(mcp, `${marker} &`);
        const record = (await mcp.client.readResource({
          uri: `shoal://task/${kernel.slice(5)}`,
        })).structuredContent as Rec;
        const pid = record.pid as number;
        assert.ok(await waitUntil(() => !processLive(pid), 10000), "bash did not exit");
        const cancel = await cancelOutcome(mcp, taskId);
        const result = await mcp.client.request(
          { method: "tasks/result", params: { taskId } },
          GetTaskPayloadResultSchema,
        );
        const value = (result.structuredContent as Rec).value as Rec;
        assert.equal(value.status, 0, "bash ended by itself");
        const final = await mcp.client.request(
          { method: "tasks/get", params: { taskId } },
          GetTaskResultSchema,
        );
        assert.equal(final.status, "completed");
        assert.equal(cancel, -32602, `round ${round}: tasks/cancel answered ${cancel}`);
      }
    } finally {
      for (const pid of pidsMentioning(marker)) Deno.kill(pid, "SIGKILL");
    }
  },
);

Deno.test("a task created under 2025-11-25 announces no notifications/tasks/status once a second initialize negotiated 2025-06-18, which has no tasks: the facade then behaves exactly as without them (M-PROTO-1, M-TASKS-1)", async () => {
  const box = await sandbox();
  const facade = new RawFacade(box);
  try {
    const init = (id: number, protocolVersion: string) =>
      facade.request(id, "initialize", {
        protocolVersion,
        capabilities: {},
        clientInfo: { name: "raw", version: "0" },
      });
    await init(1, "2025-11-25");
    const created = await facade.request(2, "tools/call", {
      name: "shoal_exec",
      arguments: { src: "sleep 1; echo done" },
      task: {},
    });
    const kernelTask = String((((created.result as Rec)._meta) as Rec)["shoal/task"]);
    assert.match(kernelTask, /^task:[0-9]+$/);
    await init(3, "2025-06-18");
    // the kernel task ends; a plain call after it shows the facade has gone on serving
    const jobs = async () => {
      const read = await facade.request(crypto.randomUUID(), "resources/read", {
        uri: `shoal://task/${kernelTask.slice(5)}`,
      });
      return ((read.result as Rec).structuredContent as Rec).state;
    };
    await pollUntil(jobs, (state) => state === "completed", 20000);
    const echo = await facade.request(4, "tools/call", {
      name: "shoal_exec",
      arguments: { src: "echo after" },
    });
    assert.equal((echo.result as Rec).isError, false);
    const statuses = facade.queued.filter((f) =>
      (f as Rec).method === "notifications/tasks/status"
    );
    assert.deepEqual(statuses, []);
  } finally {
    await facade.stop().catch(() => facade.kill());
    await box.cleanup();
  }
});

Deno.test({
  name:
    "a task whose ttl was answered null (unlimited retention, MCP 2025-11-25 TaskSchema) stays known to tasks/get and tasks/result after 256 newer tasks (M-TASKS-1) [ignored: needs a SPEC decision: M-TASKS-1 answers ttl null ('the kernel's retention in ms, or null'), which MCP 2025-11-25 defines as unlimited retention, but the facade remembers only its 256 newest MCP tasks (and the kernel its 256 newest terminal ones), so a result not fetched in time is lost: tasks/get and tasks/result of the first of 257 finished tasks answer -32602 unknown task; decide a finite ttl (expiry by time), a count bound stated to clients, or keeping what null promises]",
  ignore: true,
  fn: async () => {
    await withRawFacade(async (facade) => {
      const ids: string[] = [];
      for (let i = 0; i < 257; i++) {
        const created = await facade.request(`c${i}`, "tools/call", {
          name: "shoal_exec",
          arguments: { src: "true" },
          task: {},
        });
        const task = (created.result as Rec).task as Rec;
        assert.equal(task.ttl, null);
        ids.push(String(task.taskId));
        await facade.request(`r${i}`, "tasks/result", { taskId: task.taskId });
      }
      const first = await facade.request("g", "tasks/get", { taskId: ids[0] });
      assert.equal((first.result as Rec | undefined)?.status, "completed", JSON.stringify(first));
      const result = await facade.request("r", "tasks/result", { taskId: ids[0] });
      assert.equal((result.result as Rec | undefined)?.isError, false, JSON.stringify(result));
    });
  },
});

mcpTest(
  "tasks/cancel of a task with timeout_ms whose budget runs out while its cancel is under way (bash ignores SIGTERM, so the kernel ends it only at the SIGKILL) answers the task cancelled, and tasks/result is no timed_out answer: the budget no longer settles a task the client cancelled (M-TASKS-1, K-TASK-5, MCP 2025-11-25: a valid cancel answers the task cancelled)",
  async (mcp) => {
    const created = await mcp.client.request(
      {
        method: "tools/call",
        params: {
          name: "shoal_exec",
          // The budget must run out inside the kill grace (2000 ms) the cancel starts: with 1900 ms
          // it does for a cancel that reaches the kernel within 1.9 s of the run's start (with
          // 1000 ms, a CI run under load once sent it later: the budget had ended the task, -32602).
          arguments: { src: "trap '' TERM; sleep 30", timeout_ms: 1900 },
          task: {},
        },
      },
      CreateTaskResultSchema,
    );
    const taskId = created.task.taskId;
    const kernel = String((created._meta as Rec)["shoal/task"]);
    const cancel = await cancelOutcome(mcp, taskId);
    const final = await mcp.client.request(
      { method: "tasks/get", params: { taskId } },
      GetTaskResultSchema,
    );
    const result = await mcp.client.request(
      { method: "tasks/result", params: { taskId } },
      GetTaskPayloadResultSchema,
    );
    assert.equal(cancel, "cancelled", `tasks/cancel answered ${cancel}`);
    const record = (await mcp.client.readResource({ uri: `shoal://task/${kernel.slice(5)}` }))
      .structuredContent as Rec;
    assert.equal(record.state, "cancelled", "the kernel task was cancelled");
    assert.equal(final.status, "cancelled");
    const sc = result.structuredContent as Rec;
    assert.notEqual(sc.timed_out, true, JSON.stringify(sc));
    assert.equal((sc.value as Rec).signal, "SIGKILL", JSON.stringify(sc));
  },
);

mcpTest(
  "tasks/cancel answers the task cancelled though its kernel task has not ended by the end of the facade's wait (the kernel stopped past the kill grace), and the task stays cancelled once the run ends, with no progress after that answer: it answered status working, which MCP 2025-11-25 forbids in a cancel's answer (M-TASKS-1, K-TASK-5: a valid cancel transitions the task to cancelled before its answer, and a cancelled task stays cancelled)",
  async (mcp, box) => {
    let answered = false;
    const late: Rec[] = [];
    const { taskId, kernel } = await createTask(mcp, "trap '' TERM; sleep 30", (p) => {
      if (answered) late.push(p);
    });
    const kernelProcess = kernelPid(box.socket());
    const uri = `shoal://task/${kernel.slice(5)}`;
    const state = async () =>
      ((await mcp.client.readResource({ uri })).structuredContent as Rec).state;
    const answer = cancelOutcome(mcp, taskId);
    // Once the kernel took the cancel, it is held still past the facade's wait.
    await pollUntil(state, (s) => s === "cancelling");
    Deno.kill(kernelProcess, "SIGSTOP");
    try {
      await delay(KILL_GRACE_MS + SLICE_MS + 1000);
    } finally {
      Deno.kill(kernelProcess, "SIGCONT");
    }
    assert.equal(await answer, "cancelled");
    answered = true;
    await mcp.client.request(
      { method: "tasks/result", params: { taskId } },
      GetTaskPayloadResultSchema,
    );
    assert.equal(await state(), "cancelled");
    const final = await mcp.client.request(
      { method: "tasks/get", params: { taskId } },
      GetTaskResultSchema,
    );
    assert.equal(final.status, "cancelled");
    const statuses = mcp.taskStatuses.filter((s) => s.taskId === taskId).map((s) => s.status);
    assert.deepEqual(statuses, ["cancelled"], "one status notification, and it stays cancelled");
    assert.deepEqual(late, [], "MCP: no progress once the task is terminal");
  },
);

Deno.test({
  name:
    "tasks/get answers cancelled as soon as tasks/cancel was accepted, as the SDK 1.32.2 reference server (its task store settles cancelled at once), not working through the kernel's kill grace (M-TASKS-1) [ignored: needs a SPEC decision: M-TASKS-1 maps the kernel's cancelling to working and the facade answers tasks/cancel once the run ended (up to the 2000 ms grace plus a slice), so for a run ignoring SIGTERM tasks/get answers working for ~2 s after the cancel reached the kernel, and the cancel's answer waits as long; MCP 2025-11-25 only wants the task cancelled before that answer and for good. Settling at once would also turn the -32602 now answered for a run that ended by itself meanwhile (K-TASK-1: its state merged, completed) into a cancelled task whose result is a completed outcome; decide which]",
  ignore: true,
  fn: async () => {
    const box = await sandbox();
    try {
      const mcp = await connectMcp(box);
      try {
        const { taskId, kernel } = await createTask(mcp, "trap '' TERM; sleep 30");
        const uri = `shoal://task/${kernel.slice(5)}`;
        const state = async () =>
          ((await mcp.client.readResource({ uri })).structuredContent as Rec).state;
        const answer = cancelOutcome(mcp, taskId);
        await pollUntil(state, (s) => s === "cancelling");
        const during = await mcp.client.request(
          { method: "tasks/get", params: { taskId } },
          GetTaskResultSchema,
        );
        assert.equal(await answer, "cancelled");
        assert.equal(during.status, "cancelled", "tasks/get while the kernel was cancelling");
      } finally {
        await mcp.close();
      }
    } finally {
      await box.cleanup();
    }
  },
});
