import assert from "node:assert/strict";
import { exec } from "../../_support/exec.ts";
import { startKernelWithAgent } from "../../_support/kernel.ts";
import { memoryKiB, peakKiB, resetPeak } from "../../_support/proc.ts";
import { TMP_AGENT } from "../../_support/principals.ts";
import type { Rec } from "../../_support/rec.ts";
import { waitUntil } from "../../_support/wait.ts";

const MiB = 1024 * 1024;

Deno.test("W-FRAME-8 a peer that does not read its socket stops its own requests: 100 pipelined 12 MB events.read, unread, grow the kernel < 256 MiB; read later, all 100 are answered", async () => {
  const { kernel, token } = await startKernelWithAgent("agent:a", TMP_AGENT);
  const conn = await Deno.connect({ transport: "unix", path: kernel.socket });
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
    for (let id = 1; id <= 100; id++) {
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
    for (let at = 0; at < bytes.length;) at += await conn.write(bytes.subarray(at));
    // Before: the kernel answered all 100 into its write queue (~1.2 GB) while nothing read them.
    await waitUntil(() => memoryKiB(pid).rss - before.rss > 1024 * 1024, 20000);
    const growthMiB = (peakKiB(pid, before, memoryKiB(pid).rss) - before.rss) / 1024;
    assert.ok(growthMiB < 256, `kernel RSS grew by ${growthMiB.toFixed(0)} MiB`);
    // Reading drains the backlog, and the kernel takes the rest of the requests.
    let answered = 0;
    const buf = new Uint8Array(4 * MiB);
    while (answered < 101) {
      const n = await conn.read(buf);
      if (n === null) break;
      for (let i = 0; i < n; i++) if (buf[i] === 10) answered++;
    }
    assert.equal(answered, 101);
    const human = await kernel.attach("h");
    const r = await exec(human, "echo ok", { position: "value" });
    assert.equal(((r.value as Rec).out as Rec).v, "ok\n");
  } finally {
    conn.close();
    await kernel.cleanup();
  }
});
