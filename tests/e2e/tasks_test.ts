// Issue 4 through the real stack (SDK client → shoal-mcp → autostarted kernel → bash): background
// tasks, cancellation of whole process groups, wait budgets, task resources, subscriptions with
// one kernel connection each, progress and MCP request cancellation.
import assert from "node:assert/strict";
import { groupMembers, kernelConnections, kernelPid } from "../_support/proc.ts";
import type { Rec } from "../_support/rec.ts";
import { delay, EVENT_WAIT_MS, pollUntil, waitUntil } from "../_support/wait.ts";
import { type Mcp, mcpTest } from "./_mcp.ts";

function taskN(task: unknown): number {
  const m = /^task:([0-9]+)$/.exec(String(task));
  assert.ok(m, `a task ref: ${task}`);
  return Number(m[1]);
}

async function taskRecord(mcp: Mcp, n: number): Promise<Rec> {
  return (await mcp.read(`shoal://task/${n}`)).structuredContent as Rec;
}

/** Polls `shoal://task/N` until its state is `state`; returns the record. */
function taskInState(mcp: Mcp, n: number, state: string): Promise<Rec> {
  return pollUntil(() => taskRecord(mcp, n), (r) => r.state === state);
}

mcpTest(
  "sleep 30 with background:true returns a running task at once; shoal_cancel ends it as cancelled and no process of its group survives, not even a child ignoring SIGTERM (K-EXEC-5, K-TASK-5, K-BASH-13)",
  async (mcp) => {
    const started = await mcp.ok("shoal_exec", {
      src: "(trap '' TERM; sleep 30) & sleep 30; wait",
      background: true,
    });
    const n = taskN(started.task);
    assert.equal(started.events, `task.${n}`);
    assert.equal(started.uri, `shoal://task/${n}`);
    const running = await taskRecord(mcp, n);
    assert.equal(running.state, "running");
    const pgid = running.pid as number;
    assert.ok(
      await waitUntil(() => groupMembers(pgid).length >= 3, EVENT_WAIT_MS),
      "bash and both sleeps run in the task's process group",
    );

    const cancel = await mcp.ok("shoal_cancel", { task: started.task });
    assert.deepEqual(cancel, { task: started.task, cancel_requested: true, state: "cancelling" });
    const done = await taskInState(mcp, n, "cancelled");
    assert.match(String(done.result_ref), /^out:[0-9]+$/);
    const outcome = (await mcp.read(`shoal://task/${n}/out`)).structuredContent as Rec;
    assert.equal(outcome.ok, false);
    assert.equal(outcome.signal, "SIGTERM");
    // The SIGTERM-ignoring sleep may outlive bash until the SIGKILL after the 2000 ms grace.
    assert.ok(
      await waitUntil(() => groupMembers(pgid).length === 0, EVENT_WAIT_MS),
      `no member of the task's process group survives: ${groupMembers(pgid)}`,
    );

    const again = await mcp.ok("shoal_cancel", { task: started.task });
    assert.deepEqual(again, { task: started.task, cancel_requested: false, state: "cancelled" });
    const unknown = await mcp.call("shoal_cancel", { task: "task:999999" });
    assert.equal(unknown.isError, true);
    assert.equal(unknown.structuredContent.code, -32021);
  },
);

mcpTest(
  "timeout_ms 200 on `sleep 1; echo done` returns a timed_out task; later shoal://task/N/out resolves to the value with out done\\n; jobs and events/task.N list it (K-EXEC-6, M-RES-4)",
  async (mcp) => {
    const sc = await mcp.ok("shoal_exec", { src: "sleep 1; echo done", timeout_ms: 200 });
    assert.equal(sc.timed_out, true);
    const n = taskN(sc.task);
    const early = await mcp.read(`shoal://task/${n}/out`);
    const record = early.structuredContent as Rec;
    assert.equal(record.task, sc.task, "while running, task/N/out is the task record");

    const value = await pollUntil(
      async () => (await mcp.read(`shoal://task/${n}/out`)).structuredContent as Rec,
      (v) => v.$ === "outcome",
    );
    assert.equal(value.ok, true);
    assert.deepEqual(value.out, { $: "str", v: "done\n" });
    const out = await mcp.read(`shoal://task/${n}/out?path=out&format=raw`);
    assert.equal(out.contents[0].text, "done\n");

    const chunk = await mcp.read(`shoal://task/${n}/out?stream=stdout&cursor=0`);
    const output = chunk.structuredContent as Rec;
    assert.equal(output.data, "done\n");
    assert.equal(output.eof, true);
    assert.equal(output.next_cursor, 5);

    const jobs = (await mcp.read("shoal://jobs")).structuredContent as Rec[];
    const job = jobs.find((j) => j.task === sc.task);
    assert.ok(job, "shoal://jobs lists the task");
    assert.equal(job.state, "completed");
    assert.equal(job.cmd, "sleep 1; echo done");

    const { resources } = await mcp.client.listResources();
    assert.ok(resources.some((r) => r.uri === `shoal://task/${n}` && r.name === sc.task));

    const events = (await mcp.read(`shoal://events/task.${n}`)).structuredContent as Rec;
    assert.equal(events.channel, `task.${n}`);
    const list = events.events as Rec[];
    assert.deepEqual(list.map((e) => e.seq), list.map((_, i) => i));
    assert.equal((list[0].payload as Rec).state, "running");
    assert.deepEqual(list.at(-1)!.payload, {
      task: sc.task,
      state: "completed",
      result_ref: job.result_ref,
    });
  },
);

mcpTest(
  "subscribe to shoal://task/N: updated notifications with rising seq through completion; unsubscribe closes that kernel connection and stops its notifications; 50 cycles leave no connection behind (M-SUB-1..4, D-FIX-5)",
  async (mcp, box) => {
    // Learn the kernel-wide task counter, then subscribe before the next task exists, so that
    // its first (running) event is delivered too.
    const probe = taskN((await mcp.ok("shoal_exec", { src: "true", background: true })).task);
    const kernel = kernelPid(box.socket());
    const connections = () => kernelConnections(kernel, box.socket());
    const base = connections();
    assert.equal(base, 1, "only the facade's main connection");
    const uri = `shoal://task/${probe + 1}`;
    assert.deepEqual(await mcp.client.subscribeResource({ uri }), {});
    assert.deepEqual(await mcp.client.subscribeResource({ uri }), {}, "idempotent");
    assert.equal(connections(), base + 1, "one dedicated kernel connection");
    const sc = await mcp.ok("shoal_exec", {
      src: "for i in 1 2 3; do echo $i; sleep 0.2; done",
      background: true,
    });
    assert.equal(taskN(sc.task), probe + 1);
    const completed = (u: Rec) => u.uri === uri && (u.payload as Rec).state === "completed";
    assert.ok(await waitUntil(() => mcp.updates.some(completed), 10000), "completion notified");
    const mine = mcp.updates.filter((u) => u.uri === uri);
    assert.equal((mine[0].payload as Rec).state, "running");
    assert.equal(mine[0].seq, 0);
    for (let i = 1; i < mine.length; i++) {
      assert.ok((mine[i].seq as number) > (mine[i - 1].seq as number), "seq rises");
    }
    assert.match(String((mine.at(-1)!.payload as Rec).result_ref), /^out:[0-9]+$/);
    assert.deepEqual(await mcp.client.unsubscribeResource({ uri }), {});
    assert.ok(
      await waitUntil(() => connections() === base, EVENT_WAIT_MS),
      "its connection closed",
    );

    // Unsubscribed task/M/out gets nothing more, while events/task.M (still subscribed) does.
    const sleeper = await mcp.ok("shoal_exec", { src: "sleep 30", background: true });
    const m = taskN(sleeper.task);
    const gone = `shoal://task/${m}/out`;
    const kept = `shoal://events/task.${m}`;
    await mcp.client.subscribeResource({ uri: gone });
    await mcp.client.subscribeResource({ uri: kept });
    assert.equal(connections(), base + 2);
    await mcp.client.unsubscribeResource({ uri: gone });
    assert.ok(await waitUntil(() => connections() === base + 1, EVENT_WAIT_MS));
    await mcp.ok("shoal_cancel", { task: sleeper.task });
    const cancelled = (u: Rec) => u.uri === kept && (u.payload as Rec).state === "cancelled";
    assert.ok(await waitUntil(() => mcp.updates.some(cancelled), 10000));
    await delay(200);
    assert.deepEqual(mcp.updates.filter((u) => u.uri === gone), []);
    await mcp.client.unsubscribeResource({ uri: kept });
    assert.ok(await waitUntil(() => connections() === base, EVENT_WAIT_MS));

    for (let i = 0; i < 50; i++) {
      await mcp.client.subscribeResource({ uri: "shoal://events/user.cycle" });
      await mcp.client.unsubscribeResource({ uri: "shoal://events/user.cycle" });
    }
    assert.ok(
      await waitUntil(() => connections() === base, EVENT_WAIT_MS),
      `50 cycles leave no connection: ${connections()} open, ${base} expected`,
    );
  },
);

mcpTest(
  "a 2 s exec with a progressToken reports rising progress before its result (M-PROG-1/2)",
  async (mcp) => {
    const progress: Rec[] = [];
    const sc = await mcp.ok("shoal_exec", { src: "sleep 2; echo done" }, {
      onprogress: (p) => progress.push(p as unknown as Rec),
    });
    assert.deepEqual((sc.value as Rec).out, { $: "str", v: "done\n" });
    assert.ok(progress.length >= 1, "at least one progress notification");
    for (let i = 0; i < progress.length; i++) {
      assert.match(String(progress[i].message), /^task:[0-9]+ running, [0-9]+\.[0-9]s elapsed$/);
      assert.equal(progress[i].total, undefined);
      if (i > 0) assert.ok((progress[i].progress as number) > (progress[i - 1].progress as number));
    }
  },
);

mcpTest(
  "aborting the MCP request (notifications/cancelled) ends its task as cancelled, with no process left (M-PROG-3)",
  async (mcp) => {
    const controller = new AbortController();
    let task: string | null = null;
    const call = mcp.call("shoal_exec", { src: "sleep 30" }, {
      signal: controller.signal,
      onprogress: (p) => {
        task ??= /^(task:[0-9]+) /.exec(String(p.message))?.[1] ?? null;
        controller.abort("test cancels");
      },
    });
    await assert.rejects(call);
    assert.ok(task !== null, "a progress notification named the task");
    const done = await taskInState(mcp, taskN(task), "cancelled");
    assert.deepEqual(groupMembers(done.pid as number), []);
  },
);
