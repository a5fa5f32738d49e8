// `complete` of a large source (K-COMP-1, E-4): the word before the cursor decides command
// position, so only the tokens back to it are read, not the whole source.
import assert from "node:assert/strict";
import { startKernel } from "../../_support/kernel.ts";
import { hostTest, needsLinux } from "../../_support/host.ts";
import { memoryKiB, resetPeak } from "../../_support/proc.ts";
import type { Rec } from "../../_support/rec.ts";

hostTest(
  "E-4/K-COMP-1 completing at the end of a 14 MB source of short words costs the kernel no more memory than completing at its start: the source is not split into millions of tokens",
  needsLinux("the kernel's peak RSS (VmHWM, clear_refs)"),
  async () => {
    const k = await startKernel();
    try {
      const conn = await k.attach();
      const pid = k.child.pid;
      const src = "ab ".repeat(4_600_000) + "x";
      /** Peak RSS growth in MiB of one complete of `src` at `cursor`. */
      const growth = async (cursor: number) => {
        resetPeak(pid);
        const before = memoryKiB(pid).rss;
        const r = await conn.request("complete", { src, cursor }) as Rec;
        assert.ok(Array.isArray(r.candidates));
        return (memoryKiB(pid).hwm! - before) / 1024;
      };
      await growth(0); // warm up: the frame reader and JSON buffers of this size
      const atStart = await growth(0);
      const atEnd = await growth(new TextEncoder().encode(src).length);
      // Before: the end cost ~200 MiB more (a 4.6-million-element token array).
      assert.ok(
        atEnd - atStart < 64,
        `at the start ${atStart.toFixed(0)} MiB, at the end ${atEnd.toFixed(0)} MiB`,
      );
    } finally {
      await k.cleanup();
    }
  },
);
