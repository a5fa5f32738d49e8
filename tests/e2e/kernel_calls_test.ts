// The exact kernel requests the facade makes, seen through a wire tap between shoal-mcp (started
// as clients run it) and a real kernel: attach (M-START-2), the tool mappings (M-TOOL-5/6), the
// resource mappings (M-RES-4), subscriptions (M-SUB-2/4) and the task-backed slices (M-PROG-1).
import assert from "node:assert/strict";
import type { Rec } from "../_support/rec.ts";
import { waitUntil } from "../_support/wait.ts";
import type { RawFacade } from "../_support/facade.ts";
import { tapTest, type WireTap } from "./_tap.ts";

/** Calls a tool and returns the kernel requests it made and its `tools/call` result. */
async function call(
  facade: RawFacade,
  tap: WireTap,
  id: number,
  name: string,
  args: unknown,
): Promise<{ sent: { method: string; params: Rec }[]; result: Rec }> {
  const from = tap.requests.length;
  const response = await facade.request(id, "tools/call", { name, arguments: args });
  assert.ok(response.result, `${name}: ${JSON.stringify(response.error)}`);
  return { sent: sentSince(tap, from), result: response.result as Rec };
}

/** The requests recorded since index `from`, without (re)attaches. */
function sentSince(tap: WireTap, from: number): { method: string; params: Rec }[] {
  return tap.requests.slice(from).filter((r) => r.method !== "session.attach").map((r) => ({
    method: r.method,
    params: r.params,
  }));
}

const ATTACH = { session: "default", token: null, client: { kind: "mcp", tty: false } };

tapTest(
  "M-START-2, M-TOOL-5/6: attach and every tool example send exactly SPEC's kernel request",
  async (facade, tap) => {
    assert.deepEqual((await facade.request(0, "ping")).result, {});
    const examples: [string, Rec, string, Rec][] = [
      ["shoal_exec", { src: "false" }, "exec", {
        src: "false",
        mode: "run",
        position: "value",
        background: false,
        timeout_ms: 1000,
      }],
      ["shoal_exec", { src: "ls -l", timeout_ms: 30000 }, "exec", {
        src: "ls -l",
        mode: "run",
        position: "value",
        background: false,
        timeout_ms: 1000,
      }],
      ["shoal_exec", { src: "make test", background: true }, "exec", {
        src: "make test",
        mode: "run",
        position: "value",
        background: true,
      }],
      [
        "shoal_exec",
        {
          src: "x",
          mode: "plan",
          position: "stmt",
          background: true,
          timeout_ms: 5,
          elide: { max_bytes: 1 },
        },
        "exec",
        { src: "x", mode: "plan", position: "stmt" },
      ],
      ["shoal_plan", { src: "rm -r build" }, "exec", {
        src: "rm -r build",
        mode: "plan",
        position: "value",
      }],
      ["shoal_apply", { plan_ref: "plan:9f2c" }, "plan.apply", {
        plan_ref: "plan:9f2c",
        timeout_ms: 1000,
      }],
      ["shoal_get", { ref: "out:12", path: "out.rows", slice: [0, 20] }, "value.get", {
        ref: "out:12",
        path: "out.rows",
        slice: [0, 20],
      }],
      ["shoal_journal", { ok: false, head: "git", limit: 20 }, "journal.query", {
        ok: false,
        head: "git",
        limit: 20,
      }],
      ["shoal_cancel", { task: "task:7" }, "task.cancel", { task: "task:7" }],
      [
        "shoal_cap_request",
        {
          plan_ref: "plan:9f2c",
          effects: ["fs.write", { kind: "proc_spawn" }],
        },
        "cap.request",
        { plan_ref: "plan:9f2c", effects: ["fs.write", { kind: "proc_spawn" }] },
      ],
      ["shoal_cap_request", { plan_ref: "plan:9f2c" }, "cap.request", {
        plan_ref: "plan:9f2c",
        effects: [],
      }],
      ["shoal_pty_open", { cmd: "true", args: ["-q"], cols: 100, rows: 30 }, "pty.open", {
        cmd: "true",
        args: ["-q"],
        cols: 100,
        rows: 30,
        env: {},
      }],
      ["shoal_pty_open", { cmd: "true" }, "pty.open", { cmd: "true", args: [], env: {} }],
      [
        "shoal_pty_send",
        { pty_id: "pty:3", input: ["print(6 * 7)", { key: "Enter" }] },
        "pty.send",
        {
          pty_id: "pty:3",
          input: ["print(6 * 7)", { key: "Enter" }],
        },
      ],
      ["shoal_pty_read", { pty_id: "pty:3" }, "pty.read", { pty_id: "pty:3" }],
      ["shoal_pty_resize", { pty_id: "pty:3", cols: 120, rows: 40 }, "pty.resize", {
        pty_id: "pty:3",
        cols: 120,
        rows: 40,
      }],
      ["shoal_pty_close", { pty_id: "pty:3" }, "pty.close", { pty_id: "pty:3" }],
      ["shoal_pty_list", {}, "pty.list", {}],
    ];
    for (const [i, [tool, args, method, params]] of examples.entries()) {
      const { sent } = await call(facade, tap, i + 1, tool, args);
      assert.deepEqual(sent[0], { method, params }, `${tool} ${JSON.stringify(args)}`);
    }
    const attaches = tap.sent("session.attach");
    assert.equal(attaches.length, 1, "one main connection, attached once");
    assert.deepEqual(attaches[0].params, ATTACH);
    assert.ok(tap.requests.every((r) => r.conn === attaches[0].conn));
    assert.deepEqual(facade.junk, []);
  },
);

tapTest(
  "M-RES-3/4: every resource URI form maps to SPEC's kernel call with typed, decoded query values",
  async (facade, tap) => {
    const elide = encodeURIComponent(JSON.stringify({ max_bytes: 10 }));
    const cases: [string, string, Rec][] = [
      [
        `shoal://out/3?path=out%5B0%5D&slice=0..2&format=json&elide=${elide}&offset=0`,
        "value.get",
        {
          ref: "out:3",
          path: "out[0]",
          slice: [0, 2],
          format: "json",
          elide: { max_bytes: 10 },
          offset: 0,
        },
      ],
      ["shoal://out/3?format=render&format=raw#frag", "value.get", { ref: "out:3", format: "raw" }],
      [`shoal://val/sha256:${"ab".repeat(32)}`, "blob.get", { hash: `sha256:${"ab".repeat(32)}` }],
      [`shoal://val/${"cd".repeat(32)}`, "blob.get", { hash: "cd".repeat(32) }],
      ["shoal://task/7", "task.get", { task: "task:7" }],
      ["shoal://task/task:7", "task.get", { task: "task:7" }],
      ["shoal://task/task:7/out", "task.get", { task: "task:7" }],
      [
        "shoal://task/7/out?stream=stderr&cursor=5&max_bytes=10",
        "task.output",
        { task: "task:7", stream: "stderr", cursor: 5, max_bytes: 10 },
      ],
      ["shoal://task/task:7/out?cursor=0", "task.output", { task: "task:7", cursor: 0 }],
      ["shoal://plan/9f2c", "plan.get", { plan_ref: "plan:9f2c" }],
      ["shoal://plan/plan:9f2c", "plan.get", { plan_ref: "plan:9f2c" }],
      ["shoal://session/cwd", "session.cwd", {}],
      ["shoal://session/env", "session.env", {}],
      ["shoal://session/reef", "session.reef", {}],
      ["shoal://pty", "pty.list", {}],
      ["shoal://pty/3", "pty.read", { pty_id: "pty:3" }],
      ["shoal://pty/pty:3", "pty.read", { pty_id: "pty:3" }],
      ["shoal://jobs", "task.list", {}],
      ["shoal:///journal/", "journal.query", {}],
      [
        "shoal://journal?since=-5&head=git+x&principal=uid%3A1&ok=false&effects=fs_read,proc_spawn&limit=20",
        "journal.query",
        {
          since: -5,
          head: "git+x",
          principal: "uid:1",
          ok: false,
          effects: ["fs_read", "proc_spawn"],
          limit: 20,
        },
      ],
      ["shoal://events/user.a%2Fb?since=-1&limit=5", "events.read", {
        channel: "user.a/b",
        since: -1,
        limit: 5,
      }],
    ];
    for (const [i, [uri, method, params]] of cases.entries()) {
      const from = tap.requests.length;
      await facade.request(i, "resources/read", { uri });
      assert.deepEqual(sentSince(tap, from)[0], { method, params }, uri);
    }
    const from = tap.requests.length;
    await facade.request("big", "resources/read", {
      uri: "shoal://journal?until=1767225600123456789",
    });
    const [query] = tap.sent("journal.query", from);
    assert.match(query.raw, /"until":1767225600123456789[,}]/, "ns beyond 2^53 are sent exactly");
  },
);

tapTest(
  "M-SUB-2/4: a subscription attaches its own connection like the main one, subscribes without since, and unsubscribes its channel",
  async (facade, tap) => {
    assert.deepEqual(
      (await facade.request(0, "resources/read", { uri: "shoal://jobs" })).error,
      undefined,
    );
    const main = tap.sent("session.attach")[0].conn;
    const uri = "shoal://task/task:5/out";
    assert.deepEqual((await facade.request(1, "resources/subscribe", { uri })).result, {});
    const dedicated = tap.requests.filter((r) => r.conn !== main);
    assert.deepEqual(dedicated.map((r) => [r.method, r.params]), [
      ["session.attach", ATTACH],
      ["events.subscribe", { channel: "task.5" }],
    ]);
    assert.deepEqual((await facade.request(2, "resources/unsubscribe", { uri })).result, {});
    const after = tap.requests.filter((r) => r.conn === dedicated[0].conn);
    assert.deepEqual(after.at(-1)!.method, "events.unsubscribe");
    assert.deepEqual(after.at(-1)!.params, { channel: "task.5" });
  },
);

tapTest(
  "M-PROG-1: exec and plan.apply wait min(budget, 1000) ms, then task.await slices carry the remaining budget and the elide",
  async (facade, tap) => {
    const elide = { max_bytes: 100 };
    const long = await call(facade, tap, 1, "shoal_exec", { src: "sleep 1.5; echo x", elide });
    assert.deepEqual(long.sent[0].params, {
      src: "sleep 1.5; echo x",
      mode: "run",
      position: "value",
      background: false,
      elide,
      timeout_ms: 1000,
    });
    const task = long.sent[1].params.task;
    assert.match(String(task), /^task:[0-9]+$/);
    assert.ok(long.sent.slice(1).every((r) => r.method === "task.await"));
    assert.deepEqual(long.sent[1].params, { task, timeout_ms: 1000, elide });
    const sc = long.result.structuredContent as Rec;
    assert.deepEqual((sc.value as Rec).out, { $: "str", v: "x\n" });

    // 900 ms left after the first slice: with 300, a first answer that came back late (a kernel
    // paused over the slice's end) left none, so no task.await was sent; a fresh 1000 ms would show
    const budget = await call(facade, tap, 2, "shoal_exec", { src: "sleep 30", timeout_ms: 1900 });
    assert.equal(budget.sent[0].params.timeout_ms, 1000);
    const awaits = budget.sent.filter((r) => r.method === "task.await");
    assert.ok(awaits.length >= 1, "the rest of the budget is awaited");
    for (const a of awaits) {
      const ms = a.params.timeout_ms as number;
      assert.ok(Number.isInteger(ms) && ms >= 1 && ms <= 900, `await slice of ${ms} ms`);
      assert.equal("elide" in a.params, false);
    }
    const pending = budget.result.structuredContent as Rec;
    assert.equal(pending.timed_out, true);
    const from = tap.requests.length;
    await call(facade, tap, 3, "shoal_cancel", { task: pending.task });
    assert.deepEqual(tap.sent("task.cancel", from)[0].params, { task: pending.task });

    const plan = await call(facade, tap, 4, "shoal_plan", { src: "sleep 1.5; echo applied" });
    const planRef = (plan.result.structuredContent as Rec).plan_ref;
    const applied = await call(facade, tap, 5, "shoal_apply", { plan_ref: planRef });
    assert.equal(applied.sent[0].method, "plan.apply");
    assert.ok(applied.sent.slice(1).every((r) => r.method === "task.await"));
    assert.deepEqual(applied.sent[0].params, { plan_ref: planRef, timeout_ms: 1000 });
    const appliedTask = applied.sent[1].params.task;
    assert.deepEqual(applied.sent[1].params, { task: appliedTask, timeout_ms: 1000 });
    const done = applied.result.structuredContent as Rec;
    assert.equal(applied.result.isError, false);
    assert.deepEqual((done.value as Rec).out, { $: "str", v: "applied\n" });
    assert.ok((done.elapsed_ms as number) >= 1000, "elapsed_ms covers both slices");

    const raised = await call(facade, tap, 6, "shoal_exec", {
      src: "sleep 1.2; echo bad >&2; exit 3",
      position: "stmt",
    });
    assert.deepEqual(raised.sent.slice(0, 2).map((r) => r.method), ["exec", "task.await"]);
    assert.equal(raised.result.isError, true, "a terminal record's error is an isError result");
    const error = raised.result.structuredContent as { code: number; data: Rec };
    assert.equal(error.code, -32002);
    assert.equal(error.data.status, 3);
    assert.deepEqual((raised.result.content as Rec[])[1], {
      type: "resource_link",
      uri: error.data.uri,
      name: error.data.ref,
      mimeType: "application/json",
    });
  },
);

tapTest(
  "M-CLI-1, M-START-2: SHOAL_SOCKET and SHOAL_SESSION from the environment choose the socket and the attached session",
  async (facade, tap) => {
    await facade.request(1, "resources/read", { uri: "shoal://jobs" });
    assert.deepEqual(tap.sent("session.attach")[0].params, { ...ATTACH, session: "work" });
  },
  (tapPath) => ({
    args: [],
    env: { SHOAL_SOCKET: tapPath, SHOAL_SESSION: "work", SHOAL_TOKEN: "", SHOAL_NO_AUTOSTART: "1" },
  }),
);

for (
  const [what, noise] of [
    ["a malformed frame", new TextEncoder().encode("{not json\n")],
    ["an oversize frame", new Uint8Array(17 * 1024 * 1024).fill(0x20)],
  ] as const
) {
  tapTest(
    `M-START-4: ${what} from the kernel closes the main connection: the call in flight fails -32603 kernel disconnected, the next one reconnects and re-attaches`,
    async (facade, tap) => {
      await facade.request(1, "resources/read", { uri: "shoal://jobs" });
      const [first] = tap.sent("session.attach");
      await facade.send({
        jsonrpc: "2.0",
        id: 2,
        method: "tools/call",
        params: { name: "shoal_exec", arguments: { src: "sleep 300" } },
      });
      assert.ok(await waitUntil(() => tap.sent("exec").length === 1, 10000));
      await tap.inject(first.conn, noise);
      const dropped = await facade.response(2);
      assert.deepEqual(dropped.error, { code: -32603, message: "kernel disconnected" });
      const again = await facade.request(3, "tools/call", { name: "shoal_pty_list" });
      assert.equal((again.result as Rec).isError, false);
      const attaches = tap.sent("session.attach");
      assert.equal(attaches.length, 2, "re-attached on a new connection");
      assert.notEqual(attaches[1].conn, first.conn);
      assert.deepEqual(attaches[1].params, ATTACH);
    },
  );
}
