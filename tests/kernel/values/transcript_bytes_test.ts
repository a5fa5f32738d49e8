import assert from "node:assert/strict";
import { startKernel } from "../../_support/kernel.ts";
import { exec } from "../../_support/exec.ts";
import { memoryKiB } from "../../_support/proc.ts";

Deno.test({
  name:
    "K-BASH-11/V-REF-1 a session's transcript holds a bounded share of the kernel's memory: 24 `cat` of a 10 MB JSON file grow the kernel < 256 MiB [ignored: needs a SPEC decision: K-BASH-10 turns stdout of up to 16 MiB of JSON into a value held in memory, K-BASH-11 bounds only one exec's share (64 MiB) and V-REF-1 keeps the 1000 newest values per session by count, so an agent reading the same 10 MB file again and again grew the kernel ~21 MB per read, never given back (found by probe41's soak: 20 reads, +470 MiB idle; 1000 per session and 64 sessions allow ~1.3 TB). A byte budget over each session's (or the kernel's) transcript evicting the oldest changes V-REF-1; keeping large JSON values CAS-backed and parsing them again on access (as large str/bytes are, K-BASH-11) needs none]",
  ignore: true,
  fn: async () => {
    const k = await startKernel();
    try {
      const conn = await k.attach();
      await exec(
        conn,
        `python3 -c 'import json; print(json.dumps([{"name": "n%d" % i, "v": i, "s": "x" * 40} for i in range(120000)]))' > big.json`,
      );
      const base = memoryKiB(k.child.pid).rss;
      for (let i = 0; i < 24; i++) await exec(conn, "cat big.json");
      const grownMiB = (memoryKiB(k.child.pid).rss - base) / 1024;
      assert.ok(grownMiB < 256, `the kernel grew ${grownMiB.toFixed(0)} MiB`);
    } finally {
      await k.cleanup();
    }
  },
});
