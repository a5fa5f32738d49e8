/**
 * What bounds the kernel's memory per connection and over connections, where SPEC names no quota
 * (E-2 names sessions, tasks, ptys, subscriptions and user channels; W-FRAME-3 bounds one frame).
 * Ignored until SPEC decides; each shows what the kernel holds today.
 */
import assert from "node:assert/strict";
import { startKernel } from "../../_support/kernel.ts";
import { memoryKiB, resetPeak } from "../../_support/proc.ts";
import { delay } from "../../_support/wait.ts";

const encoder = new TextEncoder();

Deno.test({
  name:
    "E-2 SPEC decision: no quota bounds kernel connections; 1000 idle attached connections grow the kernel by ~66 MiB, and only the open-files limit (20000 here) stops more: should `connections` be a quota (-32040)?",
  ignore: true,
  fn: async () => {
    const k = await startKernel();
    const held: Deno.UnixConn[] = [];
    try {
      const pid = k.child.pid;
      await (await k.attach("x")).request("session.cwd", {});
      const before = memoryKiB(pid).rss;
      for (let i = 0; i < 1000; i++) {
        const conn = await Deno.connect({ transport: "unix", path: k.socket });
        held.push(conn);
        const params = { session: `s${i % 60}`, client: { kind: "test", tty: false } };
        const attach = { jsonrpc: "2.0", id: 0, method: "session.attach", params };
        await conn.write(encoder.encode(JSON.stringify(attach) + "\n"));
      }
      await delay(1500); // their attaches are read and answered meanwhile
      const grownMiB = (memoryKiB(pid).rss - before) / 1024;
      assert.ok(grownMiB < 16, `1000 connections grew the kernel by ${grownMiB.toFixed(0)} MiB`);
    } finally {
      for (const conn of held) conn.close();
      await k.cleanup();
    }
  },
});

Deno.test({
  name:
    "W-FRAME-3/E-2 SPEC decision: nothing bounds the requests one connection has pending; 40 pipelined parse requests of a 12 MB source held 631 MiB at the peak (WRITE_BACKLOG_LIMIT bounds only unwritten responses): should the kernel stop reading a connection whose pending requests hold more than some bytes?",
  ignore: true,
  fn: async () => {
    const k = await startKernel();
    try {
      const pid = k.child.pid;
      const conn = await k.attach("a");
      await conn.request("session.cwd", {});
      resetPeak(pid);
      const before = memoryKiB(pid).rss;
      const src = "#" + "x".repeat(12_000_000);
      const parses = [];
      for (let i = 0; i < 40; i++) parses.push(conn.request("parse", { src }));
      await Promise.all(parses);
      const grownMiB = (memoryKiB(pid).hwm! - before) / 1024;
      assert.ok(grownMiB < 256, `the kernel's peak grew by ${grownMiB.toFixed(0)} MiB`);
    } finally {
      await k.cleanup();
    }
  },
});
