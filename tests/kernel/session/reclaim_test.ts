import assert from "node:assert/strict";
import { SessionRegistry } from "../../../src/kernel/session/registry.ts";
import { ShellViews } from "../../../src/kernel/session/shell_views.ts";
import { kernelTest, startKernel, type TestKernel } from "../../_support/kernel.ts";
import { sandbox } from "../../_support/sandbox.ts";
import type { Rec } from "../../_support/rec.ts";
import { rpcError } from "../../_support/rejection.ts";
import { waitUntil } from "../../_support/wait.ts";

const state = () =>
  new ShellViews({
    cwd: "/",
    env: new Map(),
    vars: new Map(),
    funcs: new Map(),
    aliases: new Map(),
  }, "uid:0");

Deno.test("E-3 an unheld, idle session is removed after 10 minutes, not before; held or busy ones stay", () => {
  let now = 0;
  const busy = new Set<string>();
  // told of each removal, as the kernel's warm shells are (a reclaimed session keeps none)
  const removed: string[] = [];
  const sessions = new SessionRegistry(
    state,
    (name) => busy.has(name),
    () => now,
    (name) => removed.push(name),
  );
  const idle = sessions.open("idle");
  const held = sessions.open("held");
  const release = sessions.hold(held);
  const working = sessions.open("working");
  busy.add("working");
  now += 10 * 60 * 1000 - 1;
  assert.equal(sessions.open("idle"), idle, "used again within 10 minutes: kept");
  now += 10 * 60 * 1000;
  sessions.open("other");
  assert.notEqual(sessions.open("idle"), idle, "idle 10 minutes: reclaimed");
  assert.deepEqual(removed, ["idle"]);
  assert.equal(sessions.open("held"), held);
  assert.equal(sessions.open("working"), working);
  release();
  busy.delete("working");
  now += 10 * 60 * 1000;
  assert.notEqual(sessions.open("held"), held);
  assert.notEqual(sessions.open("working"), working);
  assert.ok(["held", "working"].every((name) => removed.includes(name)), `${removed}`);
});

kernelTest(
  "E-3 100 sessions opened and closed in turn never hit the sessions quota; held and busy sessions survive",
  async (k) => {
    const keeper = await k.attach("keeper");
    const kept = await keeper.request("exec", { src: "echo kept" }) as Rec;
    const busy = await k.attach("busy");
    const task = await busy.request("exec", { src: "sleep 60", async: true }) as Rec;
    busy.close();
    for (let i = 0; i < 100; i++) {
      const conn = await k.attach(`s${i}`);
      await conn.request("exec", { src: `echo ${i}` });
      conn.close();
    }
    const value = await keeper.request("value.get", { ref: kept.ref }) as Rec;
    assert.deepEqual((value.value as Rec).out, { $: "str", v: "kept\n" });
    const back = await k.attach("busy");
    assert.equal((await back.request("task.get", { task: task.task }) as Rec).state, "running");
    await back.request("task.cancel", { task: task.task });
  },
);

kernelTest(
  "E-3 64 sessions that are all attached leave no room: the 65th is -32040 sessions",
  async (k) => {
    const held = [];
    for (let i = 0; i < 64; i++) held.push(await k.attach(`held${i}`));
    const conn = await k.connect();
    const e = await rpcError(conn.request("session.attach", { session: "one-more" }));
    assert.equal(e.code, -32040);
    assert.deepEqual(e.data, { quota: "sessions", limit: 64 });
    // Once one connection closes, its session can make room (the kernel sees the close shortly).
    held[0].close();
    assert.ok(
      await waitUntil(async () => {
        try {
          await conn.request("session.attach", { session: "one-more" });
          return true;
        } catch {
          return false;
        }
      }, 10000),
    );
  },
);

kernelTest(
  "E-3/K-TASK-2/K-EVT-7 a reclaimed session's tasks go with it, and their task.N events: task.get is -32021 and task.list empty when its name is opened again (they stayed, 256 per session name ever used, with a result_ref whose value was gone)",
  async (k) => {
    const conn = await k.attach("victim");
    const { task } = await conn.request("exec", { src: "echo done", async: true }) as Rec;
    const done = await conn.request("task.await", { task }) as Rec;
    assert.equal(done.state, "completed");
    const channel = `task.${String(task).slice(5)}`;
    const held = async () =>
      ((await conn.request("events.read", { channel, since: -1 }) as Rec).events as Rec[]).length;
    assert.equal(await held(), 2);
    // Attaching elsewhere releases the victim; 64 more sessions reclaim it (E-3).
    for (let i = 0; i < 64; i++) {
      await conn.request("session.attach", { session: `s${i}`, client: { tty: false } });
    }
    await conn.request("session.attach", { session: "victim", client: { tty: false } });
    assert.equal(
      (await rpcError(conn.request("value.get", { ref: done.result_ref }))).code,
      -32004,
    );
    assert.equal((await rpcError(conn.request("task.get", { task }))).code, -32021);
    assert.deepEqual(await conn.request("task.list", {}), []);
    assert.equal(await held(), 0);
  },
);

Deno.test("V-REF-1 an exec of a reclaimed session that finishes after its name was opened again takes a number of its own", () => {
  const sessions = new SessionRegistry(state, () => false);
  const old = sessions.open("a");
  old.record(0);
  for (let i = 0; i < 64; i++) sessions.open(`s${i}`);
  const again = sessions.open("a");
  assert.notEqual(again, old, "reclaimed");
  assert.deepEqual([old.record(1), again.record(2)], [2, 3]);
});

Deno.test("V-REF-1 a session reclaimed after its name was forgotten among 4,096 later ones still numbers above every ref it gave", () => {
  const sessions = new SessionRegistry(state, () => false);
  const first = sessions.open("first");
  for (let i = 0; i < 3; i++) first.record(i);
  for (let i = 0; i < 64 + 4096 + 1; i++) sessions.open(`s${i}`);
  assert.equal(sessions.open("first").record(3), 4);
  assert.equal(sessions.open("never-seen").record(0), 4, "above every forgotten ref");
});

kernelTest(
  "V-REF-1 a session reclaimed and opened again continues its out:N numbering: a ref taken before the reclaim is unknown, never another value",
  async (k) => {
    const conn = await k.attach("victim");
    const before = await conn.request("exec", { src: "echo before" }) as Rec;
    assert.equal(before.ref, "out:1");
    // Attaching elsewhere releases the victim; 64 more sessions reclaim it (E-3), and opening it
    // again reclaims the oldest of them.
    for (let i = 0; i < 64; i++) {
      await conn.request("session.attach", { session: `s${i}`, client: { tty: false } });
    }
    await conn.request("session.attach", { session: "victim", client: { tty: false } });
    assert.equal((await rpcError(conn.request("value.get", { ref: "out:1" }))).code, -32004);
    const after = await conn.request("exec", { src: "echo after" }) as Rec;
    assert.equal(after.ref, "out:2");
    assert.equal((await rpcError(conn.request("value.get", { ref: "out:1" }))).code, -32004);
  },
);

Deno.test({
  name:
    "V-REF-1 a ref taken before a kernel restart is unknown after it, never another value [ignored: defect found by the probe round; needs a SPEC decision: V-REF-1 forbids reusing out:N only within a kernel lifetime and G-STATE-5 drops transcript values at a restart, so every session numbers from 1 again and shoal://out/1 that an agent still holds (its facade reconnects on its own, M-START-4) reads a different result; continuing each session's numbering from its durable session.transcript events, or a kernel-instance part in refs, is the SPEC's choice]",
  ignore: true,
  fn: async () => {
    const box = await sandbox();
    const first = await startKernel([], box);
    let second: TestKernel | undefined;
    try {
      const before = await (await first.attach()).request("exec", { src: "echo before" }) as Rec;
      assert.equal(before.ref, "out:1");
      await first.stop();
      second = await startKernel([], box);
      const after = await (await second.attach()).request("exec", { src: "echo after" }) as Rec;
      assert.notEqual(after.ref, before.ref);
    } finally {
      await first.stop();
      await (second ?? { cleanup: () => box.cleanup() }).cleanup();
    }
  },
});
