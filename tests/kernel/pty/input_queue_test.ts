/** What `pty.send`s wait to be written to a program that does not read is bounded (K-PTY-2). */
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
