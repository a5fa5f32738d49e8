// M-TASKS-1 through the real stack (SDK 1.32.2 client → shoal-mcp → autostarted kernel → bash):
// shoal_exec as an MCP task under 2025-11-25, every reply checked against the SDK's own schemas.
import assert from "node:assert/strict";
// @ts-types="@modelcontextprotocol/sdk/types"
import {
  CallToolResultSchema,
  CancelTaskResultSchema,
  CreateTaskResultSchema,
  GetTaskPayloadResultSchema,
  GetTaskResultSchema,
  ListTasksResultSchema,
  McpError,
  TaskStatusNotificationParamsSchema,
} from "@modelcontextprotocol/sdk/types.js";
import { FRAME_LIMIT } from "../../src/protocol/limits.ts";
import { groupMembers, kernelPid, pidsMentioning, processLive } from "../_support/proc.ts";
import { createToken } from "../_support/principals.ts";
import type { Rec } from "../_support/rec.ts";
import { rejection } from "../_support/rejection.ts";
import { pollUntil, waitUntil } from "../_support/wait.ts";
import { RawFacade, withRawFacade } from "../_support/facade.ts";
import { sandbox } from "../_support/sandbox.ts";
import { connectMcp, type Mcp, mcpTest } from "./_mcp.ts";

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

/** Starts `src` as a task; returns the task of the `CreateTaskResult` (validated by the SDK schema) with its `_meta`. */
async function createTask(mcp: Mcp, src: string, onprogress?: (p: Rec) => void): Promise<Rec> {
  const created = await mcp.client.request(
    {
      method: "tools/call",
      params: { name: "shoal_exec", arguments: { src }, task: { ttl: 60000 } },
    },
    CreateTaskResultSchema,
    onprogress ? { onprogress: (p) => onprogress(p as Rec) } : undefined,
  );
  return { ...created.task, _meta: created._meta };
}

function getTask(mcp: Mcp, taskId: string) {
  return mcp.client.request({ method: "tasks/get", params: { taskId } }, GetTaskResultSchema);
}

/** The parts of a CallToolResult that do not depend on the run (refs, times, pids). */
function stable(result: Rec): unknown {
  const sc = structuredClone(result.structuredContent) as Rec;
  delete sc.ref;
  delete sc.uri;
  delete sc.elapsed_ms;
  const value = sc.value as Rec;
  delete value.pid;
  delete value.dur_ns;
  return { sc, isError: result.isError, text: (result.content as Rec[])[0] };
}

mcpTest(
  "a task: create answers at once with a UUID task mapped to task:N, tasks/get says working while it runs, progress flows on the call's token, notifications/tasks/status announces completion, tasks/result equals the synchronous result (M-TASKS-1)",
  async (mcp) => {
    const src = "sleep 2.5; echo done";
    const progress: Rec[] = [];
    const task = await createTask(mcp, src, (p) => progress.push(p));
    assert.match(String(task.taskId), UUID);
    assert.equal(task.status, "working");
    assert.equal(task.ttl, null);
    assert.equal(task.pollInterval, 1000);
    assert.ok(!Number.isNaN(Date.parse(String(task.createdAt))));
    const kernelTask = (task._meta as Rec)["shoal/task"];
    assert.match(String(kernelTask), /^task:[0-9]+$/);

    const running = await getTask(mcp, String(task.taskId));
    assert.equal(running.status, "working");
    assert.equal(running.taskId, task.taskId);

    const result = await mcp.client.request(
      { method: "tasks/result", params: { taskId: String(task.taskId) } },
      GetTaskPayloadResultSchema,
    ) as Rec;
    CallToolResultSchema.parse(result);
    assert.deepEqual((result._meta as Rec)["io.modelcontextprotocol/related-task"], {
      taskId: task.taskId,
    });
    assert.ok(progress.length >= 1, "progress flowed on the original token");
    const status = await pollUntil(
      () => Promise.resolve(mcp.taskStatuses.find((s) => s.taskId === task.taskId)),
      (s) => s !== undefined,
    ) as Rec;
    TaskStatusNotificationParamsSchema.parse(status);
    assert.equal(status.status, "completed");
    assert.equal((await getTask(mcp, String(task.taskId))).status, "completed");

    const sync = await mcp.call("shoal_exec", { src }) as unknown as Rec;
    assert.deepEqual(stable(result), stable(sync));
    assert.deepEqual(((result.structuredContent as Rec).value as Rec).out, {
      $: "str",
      v: "done\n",
    });
  },
);

mcpTest(
  "tasks/cancel ends the kernel task and leaves no process of its group; cancelling it again, and unknown tasks, are -32602; another tool as a task is -32601 (M-TASKS-1)",
  async (mcp) => {
    const task = await createTask(mcp, "(trap '' TERM; sleep 30) & sleep 30; wait");
    const taskId = String(task.taskId);
    const n = String((task._meta as Rec)["shoal/task"]).slice(5);
    const record = (await mcp.read(`shoal://task/${n}`)).structuredContent as Rec;
    const pgid = record.pid as number;
    assert.ok(await waitUntil(() => groupMembers(pgid).length >= 3, 5000));

    const cancelled = await mcp.client.request(
      { method: "tasks/cancel", params: { taskId } },
      CancelTaskResultSchema,
    );
    assert.equal(cancelled.status, "cancelled");
    assert.ok(
      await waitUntil(() => groupMembers(pgid).length === 0, 5000),
      `no process of the task's group survives: ${groupMembers(pgid)}`,
    );
    const again = await rejection(
      mcp.client.request({ method: "tasks/cancel", params: { taskId } }, CancelTaskResultSchema),
      McpError,
    );
    assert.equal(again.code, -32602);
    const forbidden = await rejection(
      mcp.client.request({
        method: "tools/call",
        params: { name: "shoal_plan", arguments: { src: "ls" }, task: {} },
      }, CreateTaskResultSchema),
      McpError,
    );
    assert.equal(forbidden.code, -32601, "a tool without taskSupport is not run as a task");
    for (const method of ["tasks/get", "tasks/result", "tasks/cancel"]) {
      const unknown = await rejection(
        mcp.client.request(
          { method, params: { taskId: crypto.randomUUID() } } as never,
          GetTaskResultSchema,
        ),
        McpError,
      );
      assert.equal(unknown.code, -32602, method);
    }
  },
);

mcpTest(
  "tasks/list holds this principal's tasks only: another principal's facade on the same session sees none of them; a cursor it never issued is -32602 (M-TASKS-1)",
  async (mcp, box) => {
    const mine = await createTask(mcp, "echo one");
    const agent = await connectMcp(box, {
      SHOAL_TOKEN: (await createToken(box, "agent:t", "t")).secret,
      XDG_CONFIG_HOME: `${box.dir}/config`,
    });
    try {
      const theirs = await createTask(agent, "echo two");
      const list = await mcp.client.request({ method: "tasks/list" }, ListTasksResultSchema);
      assert.deepEqual(list.tasks.map((t) => t.taskId), [mine.taskId]);
      const other = await agent.client.request({ method: "tasks/list" }, ListTasksResultSchema);
      assert.deepEqual(other.tasks.map((t) => t.taskId), [theirs.taskId]);
      const foreign = await rejection(getTask(agent, String(mine.taskId)), McpError);
      assert.equal(foreign.code, -32602);
      // Every task is in the one page, which has no nextCursor: any cursor is one never issued.
      const paged = await rejection(
        mcp.client.request(
          { method: "tasks/list", params: { cursor: "page-2" } },
          ListTasksResultSchema,
        ),
        McpError,
      );
      assert.equal(paged.code, -32602, "an invalid cursor is -32602 (MCP 2025-11-25)");
    } finally {
      await agent.close();
    }
  },
  async (box) => {
    await Deno.mkdir(`${box.dir}/config/shoal`, { recursive: true });
    await Deno.writeTextFile(
      `${box.dir}/config/shoal/leash.jsonc`,
      JSON.stringify({
        principal: {
          "agent:t": { proc_spawn: ["*"], auto_apply: "in-grant", sandbox: false },
        },
      }),
    );
    return { XDG_CONFIG_HOME: `${box.dir}/config` };
  },
);

mcpTest(
  "the kernel killed while a task runs: the task is failed and tasks/result answers the JSON-RPC error -32603 kernel disconnected that the synchronous call answers, not a tool result (M-TASKS-1, M-START-4, M-OUT-5)",
  async (mcp, box) => {
    const marker = `sleep 30.${Deno.pid}0`;
    try {
      const task = await createTask(mcp, marker);
      assert.ok(await waitUntil(() => pidsMentioning(marker).length > 0, 20000), "it started");
      const kernel = kernelPid(box.socket());
      Deno.kill(kernel, "SIGKILL");
      assert.ok(await waitUntil(() => !processLive(kernel), 10000));
      const taskId = String(task.taskId);
      const e = await rejection(
        mcp.client.request(
          { method: "tasks/result", params: { taskId } },
          GetTaskPayloadResultSchema,
        ),
        McpError,
      );
      assert.equal(e.code, -32603);
      assert.match(e.message, /kernel disconnected/);
      assert.equal((await getTask(mcp, taskId)).status, "failed");
    } finally {
      // The killed kernel's run outlives it (as in kernel_kill_test).
      for (const pid of pidsMentioning(marker)) Deno.kill(pid, "SIGKILL");
    }
  },
);

Deno.test("a task-augmented shoal_exec cancelled before its CreateTaskResult leaves no kernel task running: its run is cancelled as a synchronous call's is, and nothing answers the call (M-PROG-3, M-TASKS-1)", async () => {
  const marker = `sleep 30.${Deno.pid}1`;
  await withRawFacade(async (facade) => {
    // Connected first: a call cancelled while the kernel is still being started is never sent.
    await facade.request(1, "tools/call", { name: "shoal_pty_list", arguments: {} });
    // The call and its cancellation in one write: the client gave up before any answer.
    await facade.write(
      JSON.stringify({
        jsonrpc: "2.0",
        id: 2,
        method: "tools/call",
        params: { name: "shoal_exec", arguments: { src: marker }, task: {} },
      }) + "\n" +
        JSON.stringify({
          jsonrpc: "2.0",
          method: "notifications/cancelled",
          params: { requestId: 2, reason: "user stopped" },
        }) + "\n",
    );
    const echo = await facade.request(3, "tools/call", {
      name: "shoal_exec",
      arguments: { src: "echo after" },
    });
    assert.equal((echo.result as Rec).isError, false);
    const running = async () => {
      const jobs = await facade.request(crypto.randomUUID(), "resources/read", {
        uri: "shoal://jobs",
      });
      const list = (jobs.result as { structuredContent: Rec[] }).structuredContent;
      return list.filter((t) => t.state === "running" || t.state === "cancelling");
    };
    // The kernel's kill grace passed long before: the sleep was cancelled, not left to run.
    await pollUntil(running, (tasks) => tasks.length === 0, 15000);
    assert.ok(
      await waitUntil(() => pidsMentioning(marker).length === 0, 10000),
      `no process of the run survives: ${pidsMentioning(marker)}`,
    );
    assert.equal(facade.queued.some((f) => (f as Rec).id === 2), false, "no answer to the call");
  });
});

Deno.test("before initialize no tasks were negotiated: a tools/call carrying task runs as a synchronous call and tasks/* is -32601 (M-PROTO-1, M-TASKS-1)", async () => {
  const box = await sandbox();
  const facade = new RawFacade(box);
  try {
    const call = await facade.request(1, "tools/call", {
      name: "shoal_exec",
      arguments: { src: "echo early" },
      task: {},
    });
    const result = call.result as Rec;
    assert.equal(result.task, undefined, JSON.stringify(result));
    assert.equal(((result.structuredContent as Rec).value as Rec).status, 0);
    const list = await facade.request(2, "tasks/list", {});
    assert.equal((list.error as Rec | undefined)?.code, -32601, JSON.stringify(list));
  } finally {
    await facade.stop().catch(() => facade.kill());
    await box.cleanup();
  }
});

Deno.test({
  name:
    "a task whose command exits non-zero is completed, not failed, so the SDK client's callToolStream delivers its output and status as the synchronous call does (M-TASKS-1) [ignored: defect found by the probe round; needs a SPEC decision: M-TASKS-1 maps the kernel's failed (a non-ok outcome, K-TASK-1) to MCP failed, which MCP 2025-11-25 keeps for tool calls whose result has isError (a non-zero exit is isError false, M-TOOL-5); on failed the SDK 1.32.2 client yields only 'Task … failed' and never fetches tasks/result, so a failing grep or test run loses its output]",
  ignore: true,
  fn: async () => {
    const box = await sandbox();
    try {
      const mcp = await connectMcp(box);
      try {
        await mcp.client.listTools();
        const messages: Rec[] = [];
        for await (
          const message of mcp.client.experimental.tasks.callToolStream({
            name: "shoal_exec",
            arguments: { src: "echo partial; exit 3" },
          })
        ) messages.push(message as unknown as Rec);
        const last = messages.at(-1)!;
        assert.equal(last.type, "result", JSON.stringify(last));
        const value = ((last.result as Rec).structuredContent as Rec).value as Rec;
        assert.equal(value.status, 3);
        assert.deepEqual(value.out, { $: "str", v: "partial\n" });
        const created = messages.find((m) => m.type === "taskCreated")!.task as Rec;
        assert.equal((await getTask(mcp, String(created.taskId))).status, "completed");
      } finally {
        await mcp.close();
      }
    } finally {
      await box.cleanup();
    }
  },
});

mcpTest(
  "a task with timeout_ms completes with the timed_out answer a synchronous call gives once the budget is used up, while its kernel task runs on (M-TASKS-1, K-EXEC-6, M-PROG-1)",
  async (mcp) => {
    const created = await mcp.client.request(
      {
        method: "tools/call",
        params: {
          name: "shoal_exec",
          arguments: { src: "sleep 30; echo late", timeout_ms: 1500 },
          task: { ttl: 60000 },
        },
      },
      CreateTaskResultSchema,
    );
    const kernelTask = String((created._meta as Rec)["shoal/task"]);
    const result = await mcp.client.request(
      { method: "tasks/result", params: { taskId: created.task.taskId } },
      GetTaskPayloadResultSchema,
    ) as Rec;
    const sc = result.structuredContent as Rec;
    assert.equal(sc.timed_out, true, JSON.stringify(sc));
    assert.equal(sc.task, kernelTask);
    assert.equal(sc.events, `task.${kernelTask.slice(5)}`);
    assert.notEqual(result.isError, true);
    assert.equal((await getTask(mcp, created.task.taskId)).status, "completed");
    const jobs = (await mcp.read("shoal://jobs")).structuredContent as Rec;
    assert.match(JSON.stringify(jobs), new RegExp(`"${kernelTask}"[^}]*"running"`));
    const cancelled = await mcp.ok("shoal_cancel", { task: kernelTask });
    assert.equal(cancelled.task, kernelTask);
  },
);

Deno.test("tasks/get, tasks/result and tasks/cancel of an unknown taskId as long as the frame allows answer -32602 in a frame within the 16 MiB limit: the message names the id by a bounded preview, not whole (M-TASKS-1, W-FRAME-2, M-IN-1)", async () => {
  await withRawFacade(async (facade) => {
    for (const method of ["tasks/get", "tasks/result", "tasks/cancel"]) {
      const head = `{"jsonrpc":"2.0","id":2,"method":"${method}","params":{"taskId":"`;
      const tail = `"}}`;
      const frame = head + "x".repeat(FRAME_LIMIT - head.length - tail.length) + tail;
      await facade.write(frame + "\n");
      const reply = await facade.response(2, 60000);
      assert.equal((reply.error as Rec | undefined)?.code, -32602, method);
      const size = new TextEncoder().encode(JSON.stringify(reply)).length;
      assert.ok(size <= FRAME_LIMIT, `${method}: a ${size}-byte frame exceeds the limit`);
      assert.ok(String((reply.error as Rec).message).length <= 200, method);
    }
  });
});

Deno.test("a task-augmented shoal_exec whose task.ttl is not a number is -32602 and starts nothing, as the SDK 1.32.2 TaskMetadataSchema and the E-1 table (params of the wrong type) want; a numeric ttl, even 0 or negative, is accepted (M-TASKS-1, M-IN-1)", async () => {
  await withRawFacade(async (facade) => {
    let id = 10;
    for (const ttl of ["60000", null, true, [1], { ms: 1 }]) {
      const reply = await facade.request(id++, "tools/call", {
        name: "shoal_exec",
        arguments: { src: "echo started" },
        task: { ttl },
      });
      assert.equal((reply.error as Rec | undefined)?.code, -32602, JSON.stringify(reply));
    }
    for (const ttl of [0, -5, 1.5, 1e300]) {
      const reply = await facade.request(id++, "tools/call", {
        name: "shoal_exec",
        arguments: { src: "true" },
        task: { ttl },
      });
      const task = (reply.result as Rec | undefined)?.task as Rec | undefined;
      assert.equal(typeof task?.taskId, "string", JSON.stringify(reply));
    }
    const jobs = await facade.request(id++, "resources/read", { uri: "shoal://jobs" });
    const list = (jobs.result as { structuredContent: Rec[] }).structuredContent;
    assert.equal(list.length, 4, "only the numeric-ttl calls started a task");
  });
});

Deno.test({
  name:
    "tasks/list and tasks/get of a second facade of the same principal and session (a client restarted) show the first facade's MCP tasks (M-TASKS-1) [ignored: needs a SPEC decision: M-TASKS-1 says tasks/list holds 'this principal's tasks of the session', but each facade mints its own UUIDs and remembers only the tasks it created, so after a client restart its running task:N is neither listed nor known to tasks/get (-32602) and can only be reached through shoal://jobs and shoal_cancel; decide whether MCP tasks belong to the facade (client connection) or to the principal in the session]",
  ignore: true,
  fn: async () => {
    const box = await sandbox();
    try {
      const first = await connectMcp(box);
      const second = await connectMcp(box);
      try {
        const task = await createTask(first, "sleep 20");
        const list = await second.client.request({ method: "tasks/list" }, ListTasksResultSchema);
        assert.deepEqual(list.tasks.map((t) => t.taskId), [task.taskId]);
        assert.equal((await getTask(second, String(task.taskId))).status, "working");
        await second.client.request(
          { method: "tasks/cancel", params: { taskId: String(task.taskId) } },
          CancelTaskResultSchema,
        );
      } finally {
        await first.close();
        await second.close();
      }
    } finally {
      await box.cleanup();
    }
  },
});
