import assert from "node:assert/strict";
import { exec } from "../../_support/exec.ts";
import { startKernelWithAgent } from "../../_support/kernel.ts";
import { cpuMs, memoryKiB, peakKiB, resetPeak } from "../../_support/proc.ts";
import { dirAgent } from "../../_support/principals.ts";
import type { Rec } from "../../_support/rec.ts";
import { waitUntil } from "../../_support/wait.ts";

const MiB = 1024 * 1024;

/**
 * A check for {@link waitUntil}: true once `pid` has used less than 20 ms of CPU over the last
 * second, or its RSS passed `limitKiB`.
 */
function idleOrGrown(pid: number, limitKiB: number): () => boolean {
  const samples: { at: number; cpu: number }[] = [];
  return () => {
    if (memoryKiB(pid).rss > limitKiB) return true;
    const now = { at: performance.now(), cpu: cpuMs(pid) };
    samples.push(now);
    while (samples.length > 1 && now.at - samples[1].at >= 1000) samples.shift();
    return now.at - samples[0].at >= 1000 && now.cpu - samples[0].cpu < 20;
  };
}

Deno.test("W-FRAME-8 a peer that does not read its sockets stops its own requests: 6 connections of 25 pipelined 12 MB events.read each, unread, grow the kernel < 256 MiB; read later, all are answered", async () => {
  const { kernel, token } = await startKernelWithAgent("agent:a", (box) => dirAgent(box.dir));
  const conns: Deno.Conn[] = [];
  try {
    const pid = kernel.child.pid;
    const agent = await kernel.attach("default", token);
    const payload = { x: "a".repeat(60000) };
    await Promise.all(
      Array.from(
        { length: 200 },
        () => agent.request("events.publish", { channel: "user.big", payload }),
      ),
    );
    const line = (o: unknown) => JSON.stringify(o) + "\n";
    let requests = line({
      jsonrpc: "2.0",
      id: 0,
      method: "session.attach",
      params: { session: "default", token },
    });
    for (let id = 1; id <= 25; id++) {
      requests += line({
        jsonrpc: "2.0",
        id,
        method: "events.read",
        params: { channel: "user.big" },
      });
    }
    resetPeak(pid);
    const before = memoryKiB(pid);
    const bytes = new TextEncoder().encode(requests);
    for (let c = 0; c < 6; c++) {
      const conn = await Deno.connect({ transport: "unix", path: kernel.socket });
      conns.push(conn);
      for (let at = 0; at < bytes.length;) at += await conn.write(bytes.subarray(at));
    }
    // Before: the kernel answered all 150 into its write queues (~1.8 GB) while nothing read them
    // (bounded per connection only, 6 × ~76 MiB). Either way it then has nothing left to do: wait
    // until it has used no CPU for a second (its queues are full and it reads no further) or grew
    // past 1 GiB, not for a fixed 20 s.
    await waitUntil(idleOrGrown(pid, before.rss + 1024 * 1024), 20000);
    const growthMiB = (peakKiB(pid, before, memoryKiB(pid).rss) - before.rss) / 1024;
    assert.ok(growthMiB < 256, `kernel RSS grew by ${growthMiB.toFixed(0)} MiB`);
    // Reading drains the backlog, and the kernel takes the rest of the requests.
    const buf = new Uint8Array(4 * MiB);
    for (const conn of conns) {
      let answered = 0;
      while (answered < 26) {
        const n = await conn.read(buf);
        if (n === null) break;
        for (let i = 0; i < n; i++) if (buf[i] === 10) answered++;
      }
      assert.equal(answered, 26);
    }
    const human = await kernel.attach("h");
    const r = await exec(human, "echo ok", { position: "value" });
    assert.equal(((r.value as Rec).out as Rec).v, "ok\n");
  } finally {
    for (const conn of conns) conn.close();
    await kernel.cleanup();
  }
});
