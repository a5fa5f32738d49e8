/** Kernel shutdown ends every PTY, also one whose `pty.open` was under way when it began (K-PTY-5, G-SOCK-8). */
import assert from "node:assert/strict";
import { startKernel } from "../../_support/kernel.ts";
import { kernelPid, pidsMentioning, processLive } from "../../_support/proc.ts";
import { waitUntil } from "../../_support/wait.ts";

/** A program that ignores the hangup and runs until killed; `marker` names it in its command line. */
const stubborn = (marker: string) => ["-c", 'trap "" HUP; while :; do sleep 1; done', marker];

Deno.test("K-PTY-5/G-SOCK-8 a pty.open under way when the kernel is told to stop leaves no program running and the kernel exits (it registered the PTY after every PTY was closed: the kernel waited for its program forever)", async () => {
  // SIGTERM at a few points of an open whose program line takes a while to analyse; a PTY open
  // before keeps the shutdown's close of PTYs busy for its 500 ms grace meanwhile
  for (const delayMs of [25, 75, 150]) {
    const marker = `shoal-pty-shutdown-${crypto.randomUUID()}`;
    const k = await startKernel();
    const pid = kernelPid(k.socket);
    try {
      const conn = await k.attach();
      await conn.request("pty.open", { cmd: "sh", args: stubborn(`${marker}-first`) });
      const many = Array.from({ length: 20000 }, (_, i) => `a${i}`);
      const opening = conn.request("pty.open", {
        cmd: "sh",
        args: [...stubborn(`${marker}-late`), ...many],
      }).catch(() => null);
      await new Promise((r) => setTimeout(r, delayMs));
      Deno.kill(pid, "SIGTERM");
      await opening;
      assert.ok(await waitUntil(() => !processLive(pid), 15000), `kernel still up (${delayMs} ms)`);
      assert.ok(
        await waitUntil(() => pidsMentioning(marker).length === 0, 5000),
        `a PTY's program outlived the kernel (${delayMs} ms)`,
      );
    } finally {
      for (const p of [pid, ...pidsMentioning(marker)]) {
        try {
          Deno.kill(p, "SIGKILL");
        } catch {
          // gone
        }
      }
      await k.cleanup();
    }
  }
});
