import assert from "node:assert/strict";
import { kernelGrowthMiB, kernelTest } from "../../_support/kernel.ts";
import { exec } from "../../_support/exec.ts";
import type { Rec } from "../../_support/rec.ts";

kernelTest(
  "K-EVT-7/§9.2 the render channel's ring holds its bounded renders, not the text they were cut from: 600 execs each printing one 200 KB line grow the kernel < 64 MiB (each event's 4 KiB render kept the ~200 KB head it was cut from alive: +129 MiB, 1024 events at most)",
  async (k) => {
    const conn = await k.attach();
    const grownMiB = await kernelGrowthMiB(k, conn, 64, async () => {
      for (let i = 0; i < 600; i++) await exec(conn, "head -c 150000 /dev/urandom | base64 -w 0");
      const [last] = (await conn.request("events.read", { channel: "render", limit: 1 }) as Rec)
        .events as Rec[];
      assert.ok(((last.payload as Rec).render as string).length <= 4096);
    });
    assert.ok(grownMiB < 64, `kernel RSS grew by ${grownMiB.toFixed(0)} MiB`);
  },
);
