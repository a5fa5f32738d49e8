// V-ELIDE-6 through the real kernel: a ref's `cols` grows with the table's column names, which
// dropping the preview and render head does not shrink.
import assert from "node:assert/strict";
import { withKernel } from "../../_support/kernel.ts";
import { exec } from "../../_support/exec.ts";
import type { Rec } from "../../_support/rec.ts";

const encoder = new TextEncoder();
const bytes = (x: unknown) => encoder.encode(JSON.stringify(x)).length;

for (
  const [what, py] of [
    ["20,000 columns", `[{("c%d" % i): i for i in range(20000)}]`],
    ["one column named by 200,000 characters", `[{"k" * 200000: 1}]`],
  ]
) {
  withKernel(
    `V-ELIDE-6: a one-row table with ${what} is elided within 65536 bytes in exec and value.get (its cols alone passed the cap: 289 KB, 200 KB)`,
    async (conn) => {
      const r = await exec(conn, `python3 -c 'import json; print(json.dumps(${py}))'`);
      const out = (r.value as Rec).out as Rec;
      assert.equal(out.$, "ref");
      assert.equal(out.of, "table");
      assert.equal(out.n, 1);
      assert.ok(bytes(r.value) <= 65536, `exec value is ${bytes(r.value)} bytes`);
      const got = await conn.request("value.get", { ref: r.ref, path: "out" }) as Rec;
      const ref = got.value as Rec;
      assert.equal(ref.$, "ref");
      assert.equal(ref.uri, "shoal://out/1?path=out");
      assert.ok(bytes(ref) <= 65536, `value.get value is ${bytes(ref)} bytes`);
      // The rows stay reachable by the ref's address.
      const row = await conn.request("value.get", { ref: r.ref, path: "out[0]" }) as Rec;
      assert.ok(bytes(row) <= 65536 + 64);
    },
  );
}
