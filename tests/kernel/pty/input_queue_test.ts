/** The kernel memory PTYs hold: the input `pty.send`s queue (K-PTY-2), and their grids (E-2). */
import assert from "node:assert/strict";
import { startKernel } from "../../_support/kernel.ts";
import { kernelPid, memoryKiB, peakKiB } from "../../_support/proc.ts";
import type { Rec } from "../../_support/rec.ts";
import { pollUntil } from "../../_support/wait.ts";

Deno.test("K-PTY-2 sends pipelined to a raw-mode program that reads nothing hold a bounded queue in the kernel: 120 sends of 1 MiB each waited their turn, each stalling 2 s, and grew the kernel by 259 MiB for 4 minutes; past 4 MiB queued a send now writes nothing (sent 0)", async () => {
  const k = await startKernel();
  try {
    const conn = await k.attach();
    const pid = kernelPid(k.socket);
    const opened = await conn.request("pty.open", {
      cmd: "sh",
      args: ["-c", "stty raw -echo; echo ready; sleep 600"],
    }) as Rec;
    const id = opened.pty_id;
    await pollUntil(
      () => conn.request("pty.read", { pty_id: id }) as Promise<Rec>,
      (r) => (r.screen as string[]).includes("ready"),
    );
    const before = memoryKiB(pid);
    let sampled = before.rss;
    const text = "x".repeat(1024 * 1024 - 16);
    const sends = Array.from(
      { length: 120 },
      () => conn.request("pty.send", { pty_id: id, input: text }).catch((e) => e),
    );
    // requests of one connection are dispatched in order: once this answers, every send is queued
    await conn.request("pty.list", {});
    sampled = Math.max(sampled, memoryKiB(pid).rss);
    const grewMiB = (peakKiB(pid, before, sampled) - before.rss) / 1024;
    await conn.request("pty.close", { pty_id: id });
    const results = await Promise.all(sends);
    assert.ok(grewMiB < 96, `the kernel grew by ${grewMiB.toFixed(0)} MiB`);
    const sent = results.map((r) => (r instanceof Error ? 0 : (r as Rec).sent as number));
    assert.ok(sent.every((n) => n >= 0 && n <= text.length), "each answer counts what it wrote");
  } finally {
    await k.cleanup();
  }
});

Deno.test({
  name:
    "[needs SPEC decision E-2/K-PTY-1: a bound on PTY grid memory across sessions] each PTY of 1000×1000 on its alternate screen holds about 24 MB of the kernel (both buffers' million cells), and the quotas allow 16 per session and 64 sessions: 15 of them grew the kernel by 360 MB, 1024 would hold 24 GB",
  ignore: true,
  fn: async () => {
    const k = await startKernel();
    try {
      const conn = await k.attach();
      const pid = kernelPid(k.socket);
      await conn.request("pty.open", { cmd: "true" }); // the emulator's code loaded
      const before = memoryKiB(pid);
      let sampled = before.rss;
      for (let i = 0; i < 15; i++) {
        const opened = await conn.request("pty.open", {
          cmd: "sh",
          args: ["-c", "printf '\\033[?1049hready'; sleep 60"],
          cols: 1000,
          rows: 1000,
        }) as Rec;
        await pollUntil(
          () => conn.request("pty.read", { pty_id: opened.pty_id }) as Promise<Rec>,
          (r) => (r.screen as string[])[0] === "ready",
        );
        sampled = Math.max(sampled, memoryKiB(pid).rss);
      }
      const grewMiB = (peakKiB(pid, before, sampled) - before.rss) / 1024;
      // the bound itself is the SPEC's to set: this one is a PTY's share of half a GiB
      assert.ok(grewMiB < 32, `15 PTYs grew the kernel by ${grewMiB.toFixed(0)} MiB`);
    } finally {
      await k.cleanup();
    }
  },
});
