import assert from "node:assert/strict";
import { startKernel } from "../../_support/kernel.ts";
import { exec } from "../../_support/exec.ts";
import { memoryKiB } from "../../_support/proc.ts";

const KIB = 1024;

Deno.test({
  name:
    "E-3/P-PLAN-3 the plans of reclaimed sessions hold a bounded share of the kernel's memory: 64 MiB of plans stored in each of 4 session names, each reclaimed in turn, grow the kernel < 160 MiB [ignored: needs a SPEC decision: P-PLAN-3 bounds plans per (session, principal) and E-3 says a reclaimed session's transcript values go with it, but says nothing of its plans; the kernel keeps them (a pending plan can still be approved and applied from a new session of that name), so one principal cycling session names makes the kernel hold 64 MiB per name without end (found by probe41's soak: 4 names grew it ~300 MiB). Dropping plans with their session breaks a late approval; a kernel-wide budget over plans changes P-PLAN-3/E-3]",
  ignore: true,
  fn: async () => {
    const k = await startKernel();
    try {
      const filler = `# ${"x".repeat(64 * KIB - 2)}`;
      const base = memoryKiB(k.child.pid).rss;
      for (let s = 0; s < 4; s++) {
        const conn = await k.attach(`plans${s}`);
        for (let i = 0; i < 1000; i++) await exec(conn, `${filler}${i}`, { mode: "plan" });
        conn.close();
        // 64 other sessions in use: the idle plans session is reclaimed for the last one (E-3)
        const others = [];
        for (let i = 0; i < 64; i++) others.push(await k.attach(`other${s}-${i}`));
        for (const other of others) other.close();
      }
      const grownMiB = (memoryKiB(k.child.pid).rss - base) / KIB;
      assert.ok(grownMiB < 160, `the kernel grew ${grownMiB.toFixed(0)} MiB`);
    } finally {
      await k.cleanup();
    }
  },
});
