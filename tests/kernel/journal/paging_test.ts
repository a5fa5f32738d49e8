// Paging the journal newest first, as a client with only since/until/limit (K-JQ-1) can.
import assert from "node:assert/strict";
import type { Rec } from "../../_support/rec.ts";
import { startKernel } from "../../_support/kernel.ts";

Deno.test({
  name:
    "K-JQ-1/W-NUM-1 a client pages the journal newest first with limit 1 and until = the last row's ts − 1, and gets every row once [ignored: defect found by the probe round; needs a SPEC decision: journal.query has no cursor, and W-NUM-1 makes the kernel widen a time bound above 2^53 by the 1 µs a double may lose, so `until: ts − 1` (sent exactly or not) still matches the row of ts and such a client gets that row again forever; a client that steps back 1 µs instead skips the rows started within it (two sessions' runs can be); an id cursor (e.g. `before_id`), or exact bounds for integers sent exactly, is the SPEC's choice]",
  ignore: true,
  fn: async () => {
    const k = await startKernel();
    try {
      const conn = await k.attach();
      for (let i = 0; i < 3; i++) await conn.request("exec", { src: `echo ${i}` });
      const ids: number[] = [];
      let until: bigint | null = null;
      for (let page = 0; page < 5; page++) {
        const rows = await conn.request(
          "journal.query",
          until === null ? { limit: 1 } : { limit: 1, until },
        ) as Rec[];
        if (rows.length === 0) break;
        ids.push(rows[0].id as number);
        until = BigInt(rows[0].ts as number) - 1n;
      }
      assert.deepEqual(ids, [3, 2, 1]);
    } finally {
      await k.cleanup();
    }
  },
});
