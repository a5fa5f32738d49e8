// Issue 13: an MCP client that stops reading the facade's stdout while a task runs with progress
// and events flood a subscribed channel. Its stdout is a non-blocking pipe, as a client may hand
// it: once the pipe is full the facade must wait for the client, not fail and exit. On resuming,
// progress notifications come again, the result arrives, and every event is delivered once or
// counted in a K-EVT-10 `{dropped, latest_seq}` notification.
import assert from "node:assert/strict";
// @ts-types="@modelcontextprotocol/sdk/client/index"
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { RpcConnection } from "../../src/protocol/rpc_client.ts";
import type { Rec } from "../_support/rec.ts";
import { sandbox } from "../_support/sandbox.ts";
import { CountingStdio, NON_BLOCKING_STDOUT } from "../_support/stdio_client.ts";
import { waitUntil } from "../_support/wait.ts";

/** Events published while the client does not read: their updates overfill a 64 KiB pipe. */
const EVENTS = 2000;

/** What the facade left behind: exit status, junk lines on stdout, and its stderr. */
function diagnosis(transport: CountingStdio): string {
  const junk = transport.junk.map((l) => `${l.length} bytes: ${l.slice(0, 80)}…${l.slice(-40)}`);
  return [
    `facade exit: ${JSON.stringify(transport.status)}`,
    `junk lines on stdout (${junk.length}):`,
    ...junk.slice(0, 5),
    "facade stderr:",
    transport.stderr,
  ].join("\n");
}

Deno.test("a client that stalls on a non-blocking stdout catches up: progress resumes, the result arrives, every event is delivered once or counted dropped (K-EVT-10, issue 13)", async () => {
  const box = await sandbox();
  const socket = box.socket();
  const transport = new CountingStdio(box.env({ SHOAL_SOCKET: socket }), NON_BLOCKING_STDOUT);
  const client = new Client({ name: "stalled", version: "0" });
  const updates: Rec[] = [];
  client.fallbackNotificationHandler = (n) => {
    if (n.method === "notifications/resources/updated") updates.push(n.params as Rec);
    return Promise.resolve();
  };
  let direct: RpcConnection | null = null;
  try {
    await client.connect(transport);
    await client.subscribeResource({ uri: "shoal://events/user.flood" });
    direct = await RpcConnection.connect(socket);
    await direct.request("session.attach", { session: "direct" });
    const go = `${box.dir}/go`;
    const progress: number[] = [];
    const run = client.callTool(
      {
        name: "shoal_exec",
        arguments: { src: `while [ ! -e ${go} ]; do sleep 0.1; done; echo done` },
      },
      undefined,
      { timeout: 120_000, onprogress: (p) => progress.push(p.progress) },
    );
    // Held: should the call fail while the test waits elsewhere, it fails the test where it is
    // awaited (with the facade's stderr), not as an uncaught rejection that skips the cleanup.
    run.catch(() => {});
    assert.ok(await waitUntil(() => progress.length >= 1, 30_000), "progress before the stall");
    transport.pause();
    let lastSeq = -1;
    for (let i = 0; i < EVENTS; i++) {
      const r = await direct.request("events.publish", {
        channel: "user.flood",
        payload: { i, pad: "x".repeat(1000) },
      }) as Rec;
      lastSeq = r.seq as number;
    }
    const stalled = progress.length;
    transport.resume();
    assert.ok(
      await waitUntil(() => progress.length >= stalled + 2, 30_000),
      `progress resumes after the stall (${progress.length} notes, ${stalled} before resuming)`,
    );
    Deno.writeTextFileSync(go, "");
    const result = await run as Rec;
    assert.equal(result.isError, false, JSON.stringify(result).slice(0, 300));
    const out = ((result.structuredContent as Rec).value as Rec).out as Rec;
    assert.deepEqual(out, { $: "str", v: "done\n" });
    assert.ok(
      await waitUntil(() => updates.some((u) => (u.seq as number) >= lastSeq), 30_000),
      "the client catches up to the last event",
    );
    const seqs = updates.filter((u) => typeof (u.payload as Rec).i === "number").map((u) =>
      u.seq as number
    );
    assert.equal(new Set(seqs).size, seqs.length, "no event is delivered twice");
    const dropped = updates.map((u) => (u.payload as Rec).dropped).filter((d) =>
      typeof d === "number"
    ) as number[];
    assert.ok(dropped.length > 0, "the stall made the kernel drop and count");
    assert.equal(seqs.length + dropped.reduce((a, b) => a + b, 0), EVENTS);
    const after = await client.callTool({ name: "shoal_exec", arguments: { src: "echo again" } });
    assert.equal((after as Rec).isError, false);
    assert.deepEqual(transport.junk, [], "stdout carries only whole frames (W-FRAME-8)");
  } catch (e) {
    await client.close().catch(() => {});
    throw new Error(`${e instanceof Error ? e.message : e}\n${diagnosis(transport)}`, { cause: e });
  } finally {
    direct?.close();
    await client.close().catch(() => {});
    await box.cleanup();
  }
});
