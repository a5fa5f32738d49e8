// The [FIX] rules of the kernel socket, asserted method by method and byte by byte on a real
// kernel: G-TRUST-5 (D-FIX-1/2: the original ran journal.query and cap.request unattached) and
// W-FRAME-3/4 (D-FIX-4: the original read a whole line before checking its size).
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { FRAME_LIMIT } from "../../../src/protocol/limits.ts";
import { collectLines, startKernel } from "../../_support/kernel.ts";
import { exec } from "../../_support/exec.ts";
import { kernelPid, rssBytes } from "../../_support/proc.ts";
import type { Rec } from "../../_support/rec.ts";
import { rpcError } from "../../_support/rejection.ts";
import { waitUntil } from "../../_support/wait.ts";

Deno.test("G-TRUST-5 every method of the §3.0 index but session.attach, parse and complete is -32000 on an unattached connection, given params that an attached caller gets data for", async () => {
  const k = await startKernel();
  try {
    const human = await k.attach();
    const ran = await exec(human, "echo unattached-secret");
    const task = (await exec(human, "sleep 30", { async: true })).task as string;
    const plan = (await exec(human, "touch p", { mode: "plan" })).plan_ref as string;
    const pty = (await human.request("pty.open", { cmd: "cat" }) as Rec).pty_id as string;
    const rows = await human.request("journal.query", { head: "echo", limit: 1 }) as Rec[];
    const hash = (rows[0].outputs as Rec[])[0].hash as string;
    // Each is a call the attached human is answered (not -32602) for.
    const calls: [string, Rec][] = [
      ["session.env", {}],
      ["session.cwd", {}],
      ["session.reef", {}],
      ["explain", { src: "ls" }],
      ["exec", { src: "echo hi" }],
      ["value.get", { ref: ran.ref }],
      ["blob.get", { hash }],
      ["journal.query", {}],
      ["task.list", {}],
      ["task.get", { task }],
      ["task.output", { task }],
      ["task.await", { task, timeout_ms: 1 }],
      ["task.suspend", { task }],
      ["task.resume", { task }],
      ["task.cancel", { task }],
      ["plan.get", { plan_ref: plan }],
      ["plan.list", {}],
      ["plan.apply", { plan_ref: plan }],
      ["cap.request", { plan_ref: plan }],
      ["approval.list", {}],
      ["approval.grant", { plan_ref: plan }],
      ["approval.deny", { plan_ref: plan }],
      ["pty.open", { cmd: "cat" }],
      ["pty.send", { pty_id: pty, input: "x" }],
      ["pty.read", { pty_id: pty }],
      ["pty.resize", { pty_id: pty, cols: 40, rows: 10 }],
      ["pty.list", {}],
      ["pty.close", { pty_id: pty }],
      ["events.read", { channel: "journal" }],
      ["events.publish", { channel: "user.x", payload: {} }],
      ["events.subscribe", { channel: "journal" }],
      ["events.unsubscribe", { channel: "journal" }],
    ];
    const stranger = await k.connect();
    for (const [method, params] of calls) {
      const e = await rpcError(stranger.request(method, params));
      assert.equal(e.code, -32000, method);
    }
    // Nothing the stranger sent ran or changed anything.
    assert.equal((await human.request("task.get", { task }) as Rec).state, "running");
    assert.equal(existsSync(`${k.box.dir}/p`), false, "plan.apply ran the plan");
    const listed = (await human.request("pty.list", {}) as Rec).ptys as Rec[];
    assert.deepEqual(listed.map((p) => p.alive), [true]);
    const heads = (await human.request("journal.query", {}) as Rec[]).map((r) => r.src);
    assert.equal(heads.includes("echo hi"), false);
    // The three exempt methods answer.
    assert.equal((await stranger.request("parse", { src: "ls" }) as Rec).ast_lang, "bash");
    await stranger.request("complete", { src: "ec", cursor: 2 });
    await human.request("task.cancel", { task });
    await human.request("pty.close", { pty_id: pty });
  } finally {
    await k.cleanup();
  }
});

Deno.test("W-FRAME-3/4 a kernel frame past 16 MiB is answered -32600 while its newline has not arrived, the kernel does not buffer it, and the connection serves the next frame", async () => {
  const k = await startKernel();
  const conn = await Deno.connect({ transport: "unix", path: k.socket });
  const lines: string[] = [];
  const reading = collectLines(conn.readable, lines);
  try {
    const pid = kernelPid(k.socket);
    const before = rssBytes(pid);
    const mib = new Uint8Array(1 << 20).fill(0x61);
    // 48 MiB with no newline: the error must come before any newline is sent.
    for (let i = 0; i < 48; i++) {
      for (let at = 0; at < mib.length;) at += await conn.write(mib.subarray(at));
    }
    assert.ok(await waitUntil(() => lines.length >= 1, 20000), "no reply before the newline");
    assert.deepEqual(JSON.parse(lines[0]), {
      jsonrpc: "2.0",
      id: null,
      error: { code: -32600, message: "frame exceeds 16 MiB" },
    });
    const growth = rssBytes(pid) - before;
    assert.ok(growth < FRAME_LIMIT * 2, `kernel RSS grew by ${growth} bytes`);
    const tail = '\n{"jsonrpc":"2.0","id":5,"method":"parse","params":{"src":"true"}}\n';
    await conn.write(new TextEncoder().encode(tail));
    assert.ok(await waitUntil(() => lines.length >= 2, 20000));
    assert.equal(lines.length, 2, "one error for the whole oversize frame");
    assert.equal(JSON.parse(lines[1]).id, 5);
  } finally {
    conn.close();
    await reading.catch(() => {});
    await k.cleanup();
  }
});
