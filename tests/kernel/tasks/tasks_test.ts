import assert from "node:assert/strict";
import { RpcError } from "../../../src/protocol/errors.ts";
import { EventBus } from "../../../src/kernel/events/bus.ts";
import { Journal } from "../../../src/kernel/journal/journal.ts";
import { CaptureSink } from "../../../src/kernel/store/capture.ts";
import { Cas } from "../../../src/kernel/store/cas.ts";
import { TaskRegistry } from "../../../src/kernel/tasks/registry.ts";
import type { RpcConnection } from "../../../src/protocol/rpc_client.ts";
import { sharedKernel, startKernel, type TestKernel } from "../../_support/kernel.ts";
import { groupMembers } from "../../_support/proc.ts";
import { exec } from "../../_support/exec.ts";
import type { Rec } from "../../_support/rec.ts";
import { rpcError } from "../../_support/rejection.ts";
import { delay, waitUntil } from "../../_support/wait.ts";

/** Task process groups a test started, SIGKILLed in `finally` whatever happened. */
class Groups {
  #pgids = new Set<number>();

  add(pgid: number): number {
    this.#pgids.add(pgid);
    return pgid;
  }

  killAll(): void {
    for (const pgid of this.#pgids) {
      try {
        Deno.kill(-pgid, "SIGKILL");
      } catch {
        // already gone
      }
    }
  }
}

/**
 * The cases whose tasks and sessions are their own share one kernel; those that stop it or
 * watch more than one session's tasks start their own.
 */
const sharedCase = sharedKernel();

/** Runs one test body on a session of its own in the file's kernel; kills its task groups after. */
function withTasks(
  name: string,
  body: (conn: RpcConnection, k: TestKernel, groups: Groups) => Promise<void>,
) {
  sharedCase(name, async (conn, k) => {
    const groups = new Groups();
    try {
      await body(conn, k, groups);
    } finally {
      groups.killAll();
    }
  });
}

function call(conn: RpcConnection, method: string, params: Rec): Promise<Rec> {
  return conn.request(method, params) as Promise<Rec>;
}

/** Waits until `task`'s group has `members` live processes; returns its pid (= pgid). */
async function waitStarted(
  conn: RpcConnection,
  groups: Groups,
  task: string,
  members: number,
): Promise<number> {
  let pid = 0;
  const started = await waitUntil(async () => {
    const rec = await call(conn, "task.get", { task });
    if (typeof rec.pid === "number") pid = groups.add(rec.pid);
    return pid > 0 && groupMembers(pid).length >= members;
  }, 10000);
  assert.ok(started, `${task} did not start ${members} processes`);
  return pid;
}

/** Starts `src` as a background task and waits until its group has `members` live processes. */
async function startTask(
  conn: RpcConnection,
  groups: Groups,
  src: string,
  members = 2,
): Promise<{ task: string; n: number; pid: number }> {
  const task = (await exec(conn, src, { async: true })).task as string;
  const pid = await waitStarted(conn, groups, task, members);
  return { task, n: Number(task.slice(5)), pid };
}

/** Task states published on `task.N`, oldest first. */
async function taskStates(conn: RpcConnection, n: number): Promise<string[]> {
  const r = await call(conn, "events.read", { channel: `task.${n}` });
  return (r.events as Rec[]).map((e) => (e.payload as Rec).state as string);
}

for (const flag of ["async", "background"] as const) {
  withTasks(
    `K-EXEC-5/K-TASK-5 ${flag}:true returns {task, events, uri} at once; cancel goes cancelling → cancelled and kills the whole group`,
    async (conn, _k, groups) => {
      const r = await exec(conn, "sleep 30", { [flag]: true });
      assert.deepEqual(Object.keys(r).sort(), ["events", "task", "uri"]);
      const n = Number((r.task as string).match(/^task:([0-9]+)$/)![1]);
      assert.equal(r.events, `task.${n}`);
      assert.equal(r.uri, `shoal://task/${n}`);
      const events: Rec[] = [];
      conn.onNotification = (method, params) => {
        if (method === "event" && params.channel === `task.${n}`) events.push(params);
      };
      await call(conn, "events.subscribe", { channel: `task.${n}`, since: -1 });

      const before = await call(conn, "task.get", { task: r.task });
      assert.equal(before.state, "running");
      assert.equal(before.cmd, "sleep 30");
      assert.equal(before.result_ref, null);
      assert.equal(before.finished_ns, null);
      const pid = await waitStarted(conn, groups, r.task as string, 2);

      const cancel = await call(conn, "task.cancel", { task: r.task });
      assert.deepEqual(cancel, { task: r.task, cancel_requested: true, state: "cancelling" });
      const done = await call(conn, "task.await", { task: r.task, timeout_ms: 20000 });
      assert.equal(done.timed_out, false);
      assert.equal(done.state, "cancelled");
      assert.match(done.result_ref as string, /^out:[0-9]+$/);
      assert.equal(typeof done.finished_ns, "number");
      const value = (done.result as Rec).value as Rec;
      assert.equal(value.ok, false);
      assert.equal(value.signal, "SIGTERM");
      assert.equal(value.status, null);
      // The stmt-position error the synchronous exec would have raised (K-TASK-1, K-EXEC-4).
      const error = done.error as Rec;
      assert.equal(error.code, -32002);
      assert.equal((error.data as Rec).code, "cancelled");
      assert.equal((error.data as Rec).ref, done.result_ref);
      const stored = await call(conn, "value.get", { ref: done.result_ref, path: "signal" });
      assert.deepEqual(stored.value, { $: "str", v: "SIGTERM" });

      assert.ok(await waitUntil(() => groupMembers(pid).length === 0, 5000), "group survived");
      const again = await call(conn, "task.cancel", { task: r.task });
      assert.deepEqual(again, { task: r.task, cancel_requested: false, state: "cancelled" });
      assert.ok(await waitUntil(() => events.length >= 3, 5000));
      assert.deepEqual(events.map((e) => e.seq), [0, 1, 2]);
      assert.deepEqual(events.map((e) => (e.payload as Rec).state), [
        "running",
        "cancelling",
        "cancelled",
      ]);
      assert.deepEqual(events[2].payload, {
        task: r.task,
        state: "cancelled",
        result_ref: done.result_ref,
      });
    },
  );
}

withTasks(
  "K-BASH-13 a task that ignores SIGTERM is SIGKILLed after the 2000 ms grace, not before",
  async (conn, _k, groups) => {
    const { task, n, pid } = await startTask(conn, groups, "trap '' TERM; sleep 30");
    const cancelNs = BigInt(Date.now()) * 1_000_000n;
    const cancel = await call(conn, "task.cancel", { task });
    assert.deepEqual(cancel, { task, cancel_requested: true, state: "cancelling" });
    // bash and sleep both ignore SIGTERM: the task stays cancelling through the grace period.
    await delay(300);
    assert.equal((await call(conn, "task.get", { task })).state, "cancelling");
    // A second cancel while cancelling is a no-op with the same answer (and no second event).
    assert.deepEqual(await call(conn, "task.cancel", { task }), cancel);
    assert.equal(groupMembers(pid).length, 2);
    const done = await call(conn, "task.await", { task, timeout_ms: 20000 });
    assert.equal(done.state, "cancelled");
    assert.equal(((done.result as Rec).value as Rec).signal, "SIGKILL");
    // finished_ns is kernel time; 100 ms of slack covers the two processes' clock origins.
    assert.ok(
      BigInt(done.finished_ns as number) - cancelNs >= 1_900_000_000n,
      "killed before the grace period ended",
    );
    assert.ok(await waitUntil(() => groupMembers(pid).length === 0, 5000), "group survived");
    assert.deepEqual(await taskStates(conn, n), ["running", "cancelling", "cancelled"]);
  },
);

withTasks(
  "K-BASH-13 a grandchild that ignores SIGTERM is SIGKILLed after the grace even though bash died at once",
  async (conn, _k, groups) => {
    // The outer bash dies of SIGTERM; the inner bash and its sleep ignore it and keep the group.
    const src = `bash -c "trap '' TERM; sleep 30; true"; echo unreachable`;
    const { task, pid } = await startTask(conn, groups, src, 3);
    await call(conn, "task.cancel", { task });
    const done = await call(conn, "task.await", { task, timeout_ms: 20000 });
    assert.equal(done.state, "cancelled");
    assert.equal(((done.result as Rec).value as Rec).signal, "SIGTERM");
    assert.ok(
      await waitUntil(() => groupMembers(pid).length === 0, 6000),
      `survivors: ${groupMembers(pid)}`,
    );
  },
);

withTasks(
  "K-TASK-5 cancelling a suspended task continues and ends it; the outcome is stored",
  async (conn, _k, groups) => {
    const { task, pid } = await startTask(conn, groups, "sleep 30");
    await call(conn, "task.suspend", { task });
    await call(conn, "task.cancel", { task });
    const done = await call(conn, "task.await", { task, timeout_ms: 20000 });
    assert.equal(done.state, "cancelled");
    assert.ok(
      ["SIGTERM", "SIGKILL"].includes(((done.result as Rec).value as Rec).signal as string),
    );
    assert.ok(await waitUntil(() => groupMembers(pid).length === 0, 5000));
  },
);

withTasks(
  "K-TASK-5/6 a cancel or suspend sent as soon as the task id is known, before bash runs, still applies",
  async (conn, _k, groups) => {
    const cancelled = (await exec(conn, "sleep 30", { async: true })).task as string;
    await call(conn, "task.cancel", { task: cancelled });
    const done = await call(conn, "task.await", { task: cancelled, timeout_ms: 20000 });
    assert.equal(done.state, "cancelled");
    assert.equal(done.timed_out, false);
    if (typeof done.pid === "number") {
      groups.add(done.pid);
      assert.ok(await waitUntil(() => groupMembers(done.pid as number).length === 0, 5000));
    }

    const src = "for i in $(seq 1 100000); do echo $i; sleep 0.01; done";
    const suspended = (await exec(conn, src, { async: true })).task as string;
    await call(conn, "task.suspend", { task: suspended });
    await waitStarted(conn, groups, suspended, 1);
    await delay(200);
    const total = async () => (await call(conn, "task.output", { task: suspended })).total;
    const frozen = await total();
    await delay(300);
    assert.equal(await total(), frozen, "output grew while suspended");
    await call(conn, "task.cancel", { task: suspended });
    await call(conn, "task.await", { task: suspended, timeout_ms: 20000 });
  },
);

withTasks(
  "K-EXEC-6 timeout_ms 200 on `sleep 1; echo done` returns a still-running task; task.await later yields out done\\n",
  async (conn) => {
    const r = await exec(conn, "sleep 1; echo done", { timeout_ms: 200 });
    const n = Number((r.task as string).slice(5));
    assert.deepEqual(r, {
      task: `task:${n}`,
      events: `task.${n}`,
      uri: `shoal://task/${n}`,
      timed_out: true,
    });
    const listed = (await conn.request("task.list", {})) as Rec[];
    assert.deepEqual(listed.map((t) => t.task), [r.task]);
    const done = await call(conn, "task.await", { task: r.task, timeout_ms: 20000 });
    assert.equal(done.timed_out, false);
    assert.equal(done.state, "completed");
    assert.equal(done.error, null);
    const result = done.result as Rec;
    assert.equal(result.ref, done.result_ref);
    assert.equal(result.uri, `shoal://out/${(done.result_ref as string).slice(4)}`);
    assert.deepEqual((result.value as Rec).out, { $: "str", v: "done\n" });
    assert.equal(result.render, "done");
    assert.deepEqual(await taskStates(conn, n), ["running", "completed"]);
  },
);

withTasks(
  "K-TASK-4 task.await with timeout_ms 100 on a long task returns timed_out without the result",
  async (conn, _k, groups) => {
    const { task } = await startTask(conn, groups, "sleep 30");
    const r = await call(conn, "task.await", { task, timeout_ms: 100 });
    assert.equal(r.timed_out, true);
    assert.equal(r.state, "running");
    assert.equal(r.result_ref, null);
    assert.equal("result" in r, false);
    assert.equal((await rpcError(call(conn, "task.await", { task, timeout_ms: 0 }))).code, -32602);
    await call(conn, "task.cancel", { task });
  },
);

withTasks(
  "K-EXEC-6 a timeout_ms exec that finishes in budget answers like K-EXEC-3, is never listed, and still publishes task.N",
  async (conn) => {
    const first = await exec(conn, "true", { async: true });
    const n = Number((first.task as string).slice(5));
    await call(conn, "task.await", { task: first.task });

    const r = await exec(conn, "echo fast", { timeout_ms: 20000 });
    assert.equal("task" in r, false);
    assert.match(r.ref as string, /^out:[0-9]+$/);
    assert.deepEqual((r.value as Rec).out, { $: "str", v: "fast\n" });
    assert.equal(r.render, "fast");
    assert.equal(typeof r.elapsed_ms, "number");
    // A failing stmt-position run within budget raises the K-EXEC-4 error.
    const e = await rpcError(exec(conn, "echo no >&2; exit 3", { timeout_ms: 20000 }));
    assert.equal(e.code, -32002);
    assert.equal((e.data as Rec).status, 3);
    assert.equal((e.data as Rec).stderr, "no\n");

    const listed = (await conn.request("task.list", {})) as Rec[];
    assert.deepEqual(listed.map((t) => t.task), [first.task]);
    for (const hidden of [n + 1, n + 2]) {
      const err = await rpcError(call(conn, "task.get", { task: `task:${hidden}` }));
      assert.equal(err.code, -32021);
    }
    const events = (await call(conn, "events.read", { channel: `task.${n + 1}` })).events as Rec[];
    assert.deepEqual(events.map((ev) => ev.payload), [
      { task: `task:${n + 1}`, state: "running", result_ref: null },
      { task: `task:${n + 1}`, state: "completed", result_ref: r.ref },
    ]);
    const failed = (await call(conn, "events.read", { channel: `task.${n + 2}` })).events as Rec[];
    assert.equal((failed.at(-1)!.payload as Rec).state, "failed");
    // The ids were consumed: the next task gets n + 3.
    assert.equal((await exec(conn, "true", { async: true })).task, `task:${n + 3}`);
  },
);

withTasks(
  "K-TASK-6 suspend stops output growth, resume restarts it; both idempotent; -32020 once terminal; one event per transition",
  async (conn, _k, groups) => {
    const src = "for i in $(seq 1 100000); do echo $i; sleep 0.01; done";
    const { task, n } = await startTask(conn, groups, src, 1);
    const total = async () => (await call(conn, "task.output", { task })).total as number;
    assert.ok(await waitUntil(async () => (await total()) > 0, 10000));

    const suspended = await call(conn, "task.suspend", { task });
    assert.equal(suspended.state, "suspended");
    assert.equal(suspended.task, task);
    // Let bytes already in the pipe land, then the total must hold still.
    await delay(150);
    const frozen = await total();
    for (let i = 0; i < 5; i++) {
      await delay(100);
      assert.equal(await total(), frozen, "output grew while suspended");
    }
    assert.equal((await call(conn, "task.suspend", { task })).state, "suspended");
    assert.equal((await call(conn, "task.get", { task })).state, "suspended");

    const resumed = await call(conn, "task.resume", { task });
    assert.equal(resumed.state, "running");
    assert.equal((await call(conn, "task.resume", { task })).state, "running");
    assert.ok(await waitUntil(async () => (await total()) > frozen, 10000), "no growth on resume");

    await call(conn, "task.cancel", { task });
    for (const method of ["task.suspend", "task.resume"]) {
      // Cancelling or already cancelled: both are -32020.
      assert.equal((await rpcError(call(conn, method, { task }))).code, -32020, method);
    }
    await call(conn, "task.await", { task, timeout_ms: 20000 });
    for (const method of ["task.suspend", "task.resume"]) {
      assert.equal((await rpcError(call(conn, method, { task }))).code, -32020, method);
    }
    assert.deepEqual(await taskStates(conn, n), [
      "running",
      "suspended",
      "running",
      "cancelling",
      "cancelled",
    ]);
  },
);

withTasks(
  "K-TASK-7 task.output on a running loop: growing, ordered, non-overlapping chunks that reassemble the stdout",
  async (conn) => {
    const src = "for i in $(seq 1 50); do echo $i; sleep 0.05; done";
    const { task } = await exec(conn, src, { async: true });
    const expected = Array.from({ length: 50 }, (_, i) => `${i + 1}\n`).join("");
    let cursor = 0;
    let text = "";
    let lastTotal = 0;
    const runningTotals = new Set<number>();
    let eofSeen = false;
    for (let polls = 0; !eofSeen && polls < 2000; polls++) {
      const r = await call(conn, "task.output", { task, cursor, max_bytes: 7 });
      // Read after the chunk: still running now means it was running when the chunk was cut.
      const state = (await call(conn, "task.get", { task })).state;
      assert.equal(r.task, task);
      assert.equal(r.stream, "stdout");
      assert.equal(r.cursor, cursor);
      assert.equal(r.encoding, "utf8");
      const bytes = new TextEncoder().encode(r.data as string).length;
      assert.ok(bytes <= 7, `chunk of ${bytes} bytes`);
      assert.equal(r.next_cursor, cursor + bytes);
      assert.ok((r.total as number) >= lastTotal, "total shrank");
      assert.ok((r.next_cursor as number) <= (r.total as number));
      lastTotal = r.total as number;
      if (state === "running") {
        runningTotals.add(lastTotal);
        assert.equal(r.eof, false, "eof while running");
      }
      if (r.eof) assert.equal(r.next_cursor, r.total);
      text += r.data;
      cursor = r.next_cursor as number;
      eofSeen = r.eof as boolean;
      if (bytes === 0) await delay(20);
    }
    assert.ok(eofSeen, "never reached eof");
    assert.equal(text, expected);
    assert.ok(runningTotals.size >= 3, `output seen growing only ${runningTotals.size} times`);
    const done = await call(conn, "task.await", { task });
    assert.deepEqual(((done.result as Rec).value as Rec).out, { $: "str", v: expected });

    const total = expected.length;
    const head = await call(conn, "task.output", { task, max_bytes: 10 });
    assert.deepEqual([head.data, head.next_cursor, head.total, head.eof], [
      "1\n2\n3\n4\n5\n",
      10,
      total,
      false,
    ]);
    const end = await call(conn, "task.output", { task, cursor: total });
    assert.deepEqual([end.data, end.next_cursor, end.eof], ["", total, true]);
    const beyond = await call(conn, "task.output", { task, cursor: total + 100 });
    assert.deepEqual([beyond.data, beyond.next_cursor, beyond.total], ["", total + 100, total]);
    assert.equal(beyond.eof, false, "eof needs next_cursor == total");
    const whole = await call(conn, "task.output", { task, max_bytes: 65536 });
    assert.deepEqual([whole.data, whole.next_cursor, whole.eof], [expected, total, true]);
    for (
      const bad of [{ max_bytes: 0 }, { max_bytes: 65537 }, { cursor: -1 }, { stream: "both" }]
    ) {
      const e = await rpcError(call(conn, "task.output", { task, ...bad }));
      assert.equal(e.code, -32602, JSON.stringify(bad));
    }
  },
);

withTasks("K-TASK-7 task.output reads stderr separately from stdout", async (conn) => {
  const { task } = await exec(conn, "echo out; echo err >&2; printf '\\xff' >&2", {
    async: true,
  });
  await call(conn, "task.await", { task });
  const out = await call(conn, "task.output", { task });
  assert.deepEqual([out.data, out.total, out.eof], ["out\n", 4, true]);
  const err = await call(conn, "task.output", { task, stream: "stderr" });
  assert.equal(err.stream, "stderr");
  assert.equal(err.total, 5);
  // Not valid UTF-8 as a whole: base64 of the range (V-CHUNK-1).
  assert.equal(err.encoding, "base64");
  assert.deepEqual(
    new Uint8Array(atob(err.data as string).split("").map((c) => c.charCodeAt(0))),
    new Uint8Array([...new TextEncoder().encode("err\n"), 0xff]),
  );
  const text = await call(conn, "task.output", { task, stream: "stderr", max_bytes: 4 });
  assert.deepEqual([text.encoding, text.data, text.next_cursor], ["utf8", "err\n", 4]);
});

Deno.test("K-TASK-2/K-TASK-8 tasks are visible to the whole session, -32021 to other sessions; list is ascending", async () => {
  const k = await startKernel();
  const groups = new Groups();
  try {
    const a = await k.attach("alpha");
    const a2 = await k.attach("alpha");
    const b = await k.attach("beta");
    const { task } = await startTask(a, groups, "sleep 30");
    const quick = await exec(a, "true", { async: true });
    const third = await exec(a2, "sleep 30", { async: true });
    const ids = ((await a2.request("task.list", {})) as Rec[]).map((t) => t.task as string);
    assert.deepEqual(ids, [task, quick.task, third.task]);
    const nums = ids.map((id) => Number(id.slice(5)));
    assert.deepEqual(nums, [...nums].sort((x, y) => x - y));
    assert.equal((await call(a2, "task.get", { task })).session, "alpha");
    const padded = task.replace(":", ":0"); // V-REF-3: canonical refs only
    assert.equal((await rpcError(call(a2, "task.get", { task: padded }))).code, -32021);

    assert.deepEqual(await b.request("task.list", {}), []);
    const calls: [string, Rec][] = [
      ["task.get", {}],
      ["task.await", { timeout_ms: 100 }],
      ["task.cancel", {}],
      ["task.suspend", {}],
      ["task.resume", {}],
      ["task.output", {}],
    ];
    for (const [method, extra] of calls) {
      for (const id of [task, "task:999999", "nonsense"]) {
        const e = await rpcError(call(b, method, { task: id, ...extra }));
        assert.equal(e.code, -32021, `${method} ${id}`);
      }
    }
    // beta's attempts changed nothing.
    assert.equal((await call(a, "task.get", { task })).state, "running");
    await call(a, "task.cancel", { task });
    await call(a, "task.cancel", { task: third.task });
    await call(a, "task.await", { task, timeout_ms: 20000 });
    await call(a, "task.await", { task: third.task, timeout_ms: 20000 });
  } finally {
    groups.killAll();
    await k.cleanup();
  }
});

withTasks(
  "K-TASK-2/E-2 at most 64 non-terminal tasks per session, even when 70 are requested at once",
  async (conn, k, groups) => {
    const replies = await Promise.allSettled(
      Array.from({ length: 70 }, () => exec(conn, "sleep 30", { async: true })),
    );
    const started = replies.flatMap((r) =>
      r.status === "fulfilled" ? [r.value.task as string] : []
    );
    const refused = replies.flatMap((r) => r.status === "rejected" ? [r.reason] : []);
    assert.equal(started.length, 64);
    for (const e of refused) {
      assert.ok(e instanceof RpcError);
      assert.equal(e.code, -32040);
      assert.deepEqual(e.data, { quota: "tasks", limit: 64 });
    }
    // Another session has its own quota.
    const other = await k.attach("other");
    const elsewhere = await exec(other, "true", { async: true });
    await call(other, "task.await", { task: elsewhere.task });
    // A timeout_ms exec is a task too and counts.
    assert.equal((await rpcError(exec(conn, "true", { timeout_ms: 1000 }))).code, -32040);

    for (const t of (await conn.request("task.list", {})) as Rec[]) {
      if (typeof t.pid === "number") groups.add(t.pid);
    }
    await call(conn, "task.cancel", { task: started[0] });
    await call(conn, "task.await", { task: started[0], timeout_ms: 20000 });
    const again = await exec(conn, "true", { async: true });
    assert.match(again.task as string, /^task:[0-9]+$/);
    for (const task of started) await call(conn, "task.cancel", { task });
  },
);

Deno.test("K-BASH-13 kernel shutdown cancels tasks and SIGKILLs descendants that ignore SIGTERM", async () => {
  const k = await startKernel();
  const groups = new Groups();
  try {
    const conn = await k.attach();
    const src = `bash -c "trap '' TERM; sleep 30; true"; echo unreachable`;
    const { pid } = await startTask(conn, groups, src, 3);
    const plain = await startTask(conn, groups, "sleep 30");
    assert.equal(await k.stop(), 0);
    // The kernel sent the SIGKILL before exiting; allow the killed processes a moment to die.
    const gone = () => groupMembers(pid).length + groupMembers(plain.pid).length === 0;
    assert.ok(await waitUntil(gone, 1000), `survivors: ${groupMembers(pid)}`);
  } finally {
    groups.killAll();
    await k.cleanup();
  }
});

Deno.test("K-TASK-2 a session keeps the 256 terminal tasks that finished most recently, whatever their ids; other sessions and dropped tasks do not count", async () => {
  const dir = await Deno.makeTempDir({ prefix: "shoal-tasks-test-" });
  const journal = Journal.open(dir);
  const sink = await CaptureSink.open(await Cas.open(dir));
  try {
    const tasks = new TaskRegistry(new EventBus(journal));
    const output = { stdout: sink, stderr: sink };
    const other = tasks.create("other", "p", "true", output);
    tasks.finish(other, "completed", "out:1", null);
    const slow = tasks.create("s", "p", "sleep 9", output);
    tasks.spawned(slow, Deno.pid); // visible from now on; nothing signals it
    const quick = Array.from({ length: 256 }, () => tasks.create("s", "p", "true", output));
    for (const t of quick) tasks.finish(t, "completed", null, null);
    assert.equal(tasks.list("s").length, 257);
    tasks.finish(slow, "failed", null, null);
    // The slow task finished last: the quick task that finished first is the one forgotten.
    assert.equal(tasks.get("s", slow.id).state, "failed");
    assert.throws(() => tasks.get("s", quick[0].id), (e: RpcError) => e.code === -32021);
    assert.equal(tasks.get("s", quick[1].id).state, "completed");
    assert.equal(tasks.list("s").length, 256);
    assert.deepEqual(
      tasks.list("s").map((t) => t.n),
      [slow.n, ...quick.slice(1).map((t) => t.n)],
      "ascending by id",
    );
    // A task that ends within its caller's wait budget is never listed (K-EXEC-6), and pushes
    // no kept task out.
    const hidden = tasks.create("s", "p", "true", output);
    const waiting = tasks.waitInBudget(hidden, 60000);
    tasks.finish(hidden, "completed", null, null);
    assert.equal(await waiting, false);
    assert.throws(() => tasks.get("s", hidden.id), (e: RpcError) => e.code === -32021);
    assert.equal(tasks.list("s").length, 256);
    assert.equal(tasks.get("s", quick[1].id).state, "completed");
    assert.equal(tasks.get("other", other.id).state, "completed");
  } finally {
    await sink.abort();
    journal.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a task's event channel is let go with the task: 10,000 execs leave no more channels than retained tasks (issue 13 soak)", async () => {
  const dir = await Deno.makeTempDir({ prefix: "shoal-tasks-test-" });
  const journal = Journal.open(dir);
  const sink = await CaptureSink.open(await Cas.open(dir));
  try {
    const bus = new EventBus(journal);
    const tasks = new TaskRegistry(bus);
    const output = { stdout: sink, stderr: sink };
    const events = (t: { n: number }) => bus.read(`task.${t.n}`).length;
    // Tasks that end within their caller's budget (K-EXEC-6): the events of the newest 256
    // stay readable, older ones go.
    const hidden = [];
    for (let i = 0; i < 257; i++) {
      const task = tasks.create("s", "p", "true", output);
      tasks.spawned(task, 1000 + i);
      const waiting = tasks.waitInBudget(task, 60000);
      tasks.finish(task, "completed", null, null);
      await waiting;
      hidden.push(task);
    }
    assert.equal(events(hidden[0]), 0);
    assert.equal(events(hidden[1]), 2, "running, completed");
    // A listed task's events stay readable while the task is retained, and go with it.
    const listed = Array.from({ length: 257 }, () => tasks.create("s", "p", "true", output));
    for (const [i, t] of listed.entries()) {
      tasks.spawned(t, 2000 + i);
      tasks.finish(t, "completed", null, null);
    }
    assert.equal(events(listed[0]), 0, "evicted with its task (K-TASK-2)");
    assert.equal(events(listed[1]), 2, "running, completed");
  } finally {
    await sink.abort();
    journal.close();
    await Deno.remove(dir, { recursive: true });
  }
});

sharedCase(
  "K-TASK-1 a task record's cmd is cut like the outcome's (256 scalars and …), so listing tasks stays small whatever their sources",
  async (conn) => {
    const src = ": " + "𝄞".repeat(100000);
    const { task } = await exec(conn, src, { async: true });
    const cut = ": " + "𝄞".repeat(254) + "…";
    assert.equal((await call(conn, "task.get", { task })).cmd, cut);
    const done = await call(conn, "task.await", { task });
    assert.equal(done.cmd, cut);
    assert.equal(((done.result as Rec).value as Rec).cmd, cut);
    const listed = await conn.request("task.list", {}) as Rec[];
    assert.deepEqual(listed.map((t) => t.cmd), [cut]);
  },
);
