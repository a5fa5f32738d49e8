/**
 * K-EVT-8 for the dynamic kernel channels: `task.N` reaches the task's session only, `pty.N` its
 * opener and the session's human only, unless the caller has `journal_read`. Real kernel, real
 * socket, real bash and PTY.
 */
import assert from "node:assert/strict";
import type { RpcConnection } from "../../../src/protocol/rpc_client.ts";
import { collectEvents, waitForEvent } from "../../_support/events.ts";
import { exec } from "../../_support/exec.ts";
import { kernelTest, startKernelWithPolicy, type TestKernel } from "../../_support/kernel.ts";
import { createToken } from "../../_support/principals.ts";
import type { Rec } from "../../_support/rec.ts";
import { pollUntil } from "../../_support/wait.ts";

/** Grants that let an agent run ordinary commands and open PTYs without approval. */
const AGENT = {
  fs: { read: ["/**"], write: ["/**"], delete: ["/**"] },
  proc_spawn: ["*"],
  auto_apply: "in-grant",
};

/** The local human in `s1`, agent A beside it, agent B in `s2`, and a `journal_read` reader in `s2`. */
async function attachAll(k: TestKernel) {
  const as = async (principal: string, session: string) =>
    k.attach(session, (await createToken(k.box, principal)).secret);
  return {
    human: await k.attach("s1"),
    a: await as("agent:a", "s1"),
    b: await as("agent:b", "s2"),
    reader: await as("agent:reader", "s2"),
  };
}

/** The payloads `conn` reads on `channel` from its start. */
async function readAll(conn: RpcConnection, channel: string): Promise<Rec[]> {
  const r = await conn.request("events.read", { channel, since: -1 }) as Rec;
  return (r.events as Rec[]).map((e) => e.payload as Rec);
}

const policy = () =>
  startKernelWithPolicy({
    "agent:a": AGENT,
    "agent:b": AGENT,
    "agent:reader": { ...AGENT, journal_read: true },
  });

kernelTest(
  "task.N events reach the task's session only, or a journal_read holder (K-EVT-8, K-TASK-2)",
  async (k) => {
    const { human, a, b, reader } = await attachAll(k);
    const first = await exec(human, "true", { async: true });
    const n = Number(String(first.task).split(":")[1]) + 1;
    const channel = `task.${n}`;
    const pushedToB = collectEvents(b);
    const pushedToA = collectEvents(a);
    await b.request("events.subscribe", { channel });
    await b.request("events.subscribe", { channel: "user.after" });
    await a.request("events.subscribe", { channel });
    const task = await exec(human, "echo task-of-the-human", { async: true });
    assert.equal(task.task, `task:${n}`);
    await waitForEvent(pushedToA, (e) => (e.payload as Rec).state === "completed");
    await human.request("events.publish", { channel: "user.after", payload: 1 });
    await waitForEvent(pushedToB, (e) => e.channel === "user.after");

    assert.deepEqual(pushedToB.filter((e) => e.channel === channel), []);
    assert.deepEqual(await readAll(b, channel), []);
    for (const [who, conn] of [["human", human], ["agent beside it", a], ["reader", reader]]) {
      const states = (await readAll(conn as RpcConnection, channel)).map((p) => p.state);
      assert.deepEqual(states, ["running", "completed"], who as string);
    }
  },
  policy,
);

kernelTest(
  "pty.N events reach the PTY's opener and the session's human only, or a journal_read holder (K-EVT-8, K-PTY-7)",
  async (k) => {
    const { human, a, b, reader } = await attachAll(k);
    const pushedToA = collectEvents(a);
    const opened = await human.request("pty.open", {
      cmd: "bash",
      args: ["--norc", "-c", "echo typed-by-the-human"],
    }) as Rec;
    const channel = `pty.${String(opened.pty_id).split(":")[1]}`;
    await a.request("events.subscribe", { channel, since: -1 });
    await b.request("events.subscribe", { channel, since: -1 });
    await a.request("events.subscribe", { channel: "user.after" });
    const ended = (events: Rec[]) => events.some((p) => p.alive === false);
    await pollUntil(() => readAll(human, channel), ended);
    await human.request("events.publish", { channel: "user.after", payload: 1 });
    await waitForEvent(pushedToA, (e) => e.channel === "user.after");

    assert.deepEqual(pushedToA.filter((e) => e.channel === channel), []);
    assert.deepEqual(await readAll(a, channel), []);
    assert.deepEqual(await readAll(b, channel), []);
    assert.ok((await readAll(human, channel)).length > 0);
    assert.ok((await readAll(reader, channel)).length > 0);
    // the agent's own PTY stays its own to watch
    const own = await a.request("pty.open", { cmd: "echo", args: ["mine"] });
    const ownChannel = `pty.${String((own as Rec).pty_id).split(":")[1]}`;
    await pollUntil(() => readAll(a, ownChannel), ended);
  },
  policy,
);
