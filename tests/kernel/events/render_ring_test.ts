import assert from "node:assert/strict";
import { kernelTest } from "../../_support/kernel.ts";
import { exec } from "../../_support/exec.ts";
import { memoryKiB } from "../../_support/proc.ts";
import type { Rec } from "../../_support/rec.ts";
import { delay } from "../../_support/wait.ts";

kernelTest(
  "K-EVT-7/§9.2 the render channel's ring holds its bounded renders, not the text they were cut from: 600 execs each printing one 200 KB line grow the kernel < 64 MiB (each event's 4 KiB render kept the ~200 KB head it was cut from alive: +129 MiB, 1024 events at most)",
  async (k) => {
    const conn = await k.attach();
    await exec(conn, "echo warm");
    await delay(3000); // the first run's garbage collected, as it is for what follows
    const before = memoryKiB(k.child.pid).rss;
    for (let i = 0; i < 600; i++) await exec(conn, "head -c 150000 /dev/urandom | base64 -w 0");
    const [last] = (await conn.request("events.read", { channel: "render", limit: 1 }) as Rec)
      .events as Rec[];
    assert.ok(((last.payload as Rec).render as string).length <= 4096);
    await delay(8000); // the kernel's idle collection and trim (daemon/idle_trim.ts)
    const grownMiB = (memoryKiB(k.child.pid).rss - before) / 1024;
    assert.ok(grownMiB < 64, `kernel RSS grew by ${grownMiB.toFixed(0)} MiB`);
  },
);
