/** Kernel shutdown stops every run, also one whose exec was under way when it began (K-BASH-13, G-SOCK-8). */
import assert from "node:assert/strict";
import { startKernel } from "../../_support/kernel.ts";
import { kernelPid, pidsMentioning, processLive } from "../../_support/proc.ts";
import { waitUntil } from "../../_support/wait.ts";

/** A command that ignores SIGHUP and SIGTERM and runs until killed; `marker` names it in its command line. */
const stubborn = (marker: string) =>
  `sh -c 'trap "" HUP TERM; while :; do sleep 1; done' ${marker}`;

Deno.test("K-BASH-13/G-SOCK-8 an exec under way when the kernel is told to stop leaves no program running after the kernel exits (it started after every run was cancelled)", async () => {
  // SIGTERM at a few points of an exec whose source takes a while to analyse; a run started
  // before keeps the shutdown's cancelling busy for its 2 s grace meanwhile
  for (const delayMs of [25, 75, 150]) {
    const marker = `shoal-exec-shutdown-${crypto.randomUUID()}`;
    const k = await startKernel();
    const pid = kernelPid(k.socket);
    try {
      const conn = await k.attach();
      await conn.request("exec", { src: stubborn(`${marker}-first`), async: true });
      const many = Array.from({ length: 20000 }, (_, i) => `: a${i}`).join("\n");
      const running = conn.request("exec", {
        src: `${stubborn(`${marker}-late`)} &\n${many}`,
        async: true,
      }).catch(() => null);
      await new Promise((r) => setTimeout(r, delayMs));
      Deno.kill(pid, "SIGTERM");
      await running;
      assert.ok(await waitUntil(() => !processLive(pid), 15000), `kernel still up (${delayMs} ms)`);
      assert.ok(
        await waitUntil(() => pidsMentioning(marker).length === 0, 5000),
        `a run's program outlived the kernel (${delayMs} ms)`,
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
