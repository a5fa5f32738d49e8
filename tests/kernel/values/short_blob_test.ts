// A transcript value whose CAS blob file became shorter under the running kernel (a disk tool,
// a restore, another program in the state directory): paging it must not hand out a chunk that
// makes no progress, nor an empty slice as if the bytes were there (K-VAL-4, K-VAL-5, J-4).
import assert from "node:assert/strict";
import { withKernel } from "../../_support/kernel.ts";
import { exec } from "../../_support/exec.ts";
import type { Rec } from "../../_support/rec.ts";
import { rpcError } from "../../_support/rejection.ts";

withKernel(
  'K-VAL-4/K-VAL-5 a 22.9 MB stdout whose blob file was cut to 1000 bytes answers -32004 for raw chunks, slices and renders past the cut, as a deleted blob does (raw at offset 10000 gave len 0 with next 10000, so a client following next never ended, and slice [5000, 5010] gave "")',
  async (conn, k) => {
    const r = await exec(conn, "seq 1 3000000", { position: "value" });
    const rows = await conn.request("journal.query", { limit: 1 }) as Rec[];
    const stdout = (rows[0].outputs as Rec[]).find((o) => o.kind === "stdout")!;
    assert.equal(stdout.len, 22888896);
    const hex = (stdout.hash as string).slice(-64);
    const file = `${k.box.dir}/state/shoal/cas/${hex.slice(0, 2)}/${hex.slice(2, 4)}/${hex}`;
    await Deno.truncate(file, 1000);
    const head = await conn.request("value.get", {
      ref: r.ref,
      path: "out",
      format: "raw",
      elide: { max_bytes: 100 },
    }) as Rec;
    assert.equal(head.len, 100, "bytes before the cut are still served");
    for (
      const params of [
        { path: "out", format: "raw", offset: 10000 },
        { path: "stdout", format: "raw", offset: 65000 },
        { path: "out", slice: [5000, 5010] },
        { path: "out", slice: [5000, 2000000], format: "raw", offset: 0 },
        { path: "out", format: "render" },
      ]
    ) {
      const e = await rpcError(conn.request("value.get", { ref: r.ref, ...params }));
      assert.equal(e.code, -32004, JSON.stringify(params));
      assert.deepEqual(e.data, { hash: stdout.hash });
    }
    const alive = await exec(conn, "echo alive", { position: "value" });
    assert.equal(((alive.value as Rec).out as Rec).v, "alive\n");
  },
);
