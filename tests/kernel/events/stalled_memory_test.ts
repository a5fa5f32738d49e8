/**
 * K-EVT-9, E-2: a connection that subscribes and never reads its socket holds the kernel's memory
 * to about one event frame, however many of its 64 subscriptions have events queued.
 */
import assert from "node:assert/strict";
import { hostTest, needsLinux } from "../../_support/host.ts";
import { startKernel } from "../../_support/kernel.ts";
import { memoryKiB } from "../../_support/proc.ts";
import type { Rec } from "../../_support/rec.ts";
import { delay } from "../../_support/wait.ts";

const encoder = new TextEncoder();
const CONNECTIONS = 20;
const CHANNELS = 64;

hostTest(
  "K-EVT-9 20 connections that never read, each subscribed to 64 channels, hold about one event frame each: every subscription's next frame was encoded and queued for the socket (64 KB each, +107 MiB here; 100 such connections held ~380 MB)",
  needsLinux("VmRSS in /proc/PID/status"),
  async () => {
    const k = await startKernel();
    const stalled: Deno.UnixConn[] = [];
    try {
      const publisher = await k.attach("p");
      const pid = k.child.pid;
      for (let i = 0; i < CONNECTIONS; i++) {
        const conn = await Deno.connect({ transport: "unix", path: k.socket });
        stalled.push(conn);
        const frames = [{
          jsonrpc: "2.0",
          id: 0,
          method: "session.attach",
          params: { session: `s${i}`, client: { kind: "test", tty: false } },
        }];
        for (let c = 0; c < CHANNELS; c++) {
          const params = { channel: `user.c${c}` };
          frames.push({ jsonrpc: "2.0", id: c + 1, method: "events.subscribe", params } as never);
        }
        await conn.write(encoder.encode(frames.map((f) => JSON.stringify(f) + "\n").join("")));
      }
      // Their requests are read as they come: by the time a round trip of another connection
      // is answered and a moment has passed, they have subscribed.
      await publisher.request("session.cwd", {});
      await delay(500);
      const before = memoryKiB(pid).rss;
      const payload = "y".repeat(60_000);
      for (let round = 0; round < 8; round++) {
        for (let c = 0; c < CHANNELS; c++) {
          await publisher.request("events.publish", { channel: `user.c${c}`, payload });
        }
      }
      await delay(1000);
      const grownMiB = (memoryKiB(pid).rss - before) / 1024;
      assert.ok(grownMiB < 48, `the kernel grew by ${grownMiB.toFixed(0)} MiB`);
      const alive = await publisher.request("session.cwd", {}) as Rec;
      assert.ok(alive.cwd);
    } finally {
      for (const conn of stalled) conn.close();
      await k.cleanup();
    }
  },
);
