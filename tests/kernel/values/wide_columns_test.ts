// V-ELIDE-6 through the real kernel: a ref's `cols` grows with the table's column names, which
// dropping the preview and render head does not shrink.
import assert from "node:assert/strict";
import { sharedKernel, startKernel } from "../../_support/kernel.ts";
import { exec } from "../../_support/exec.ts";
import type { Rec } from "../../_support/rec.ts";

const encoder = new TextEncoder();
const bytes = (x: unknown) => encoder.encode(JSON.stringify(x)).length;

/** The two tables are read in sessions of their own, of one kernel. */
const sharedCase = sharedKernel();

for (
  const [what, py] of [
    ["20,000 columns", `[{("c%d" % i): i for i in range(20000)}]`],
    ["one column named by 200,000 characters", `[{"k" * 200000: 1}]`],
  ]
) {
  sharedCase(
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

Deno.test({
  name:
    "V-ELIDE-6/K-VAL-2: value.get with a 180 KB path that selects a 1000-item list answers within 65536 bytes [ignored: needs a SPEC decision: K-VAL-2 puts the path as given into the ref's uri and V-PATH-1 bounds no path's length, so out[0..1000] repeated 20,000 times gives a 180,103-byte ref (its uri 180,022 bytes) against V-ELIDE-6's MUST; a path length limit (-32005 beyond), or a uri without the path when it cannot fit, is the SPEC's choice]",
  ignore: true,
  fn: async () => {
    const k = await startKernel();
    try {
      const conn = await k.attach();
      const r = await exec(conn, "seq 1 1000 | paste -sd, | sed 's/.*/[&]/'", {
        position: "value",
      });
      const got = await conn.request("value.get", {
        ref: r.ref,
        path: "out" + "[0..1000]".repeat(20000),
      }) as Rec;
      assert.equal((got.value as Rec).$, "ref");
      assert.ok(bytes(got.value) <= 65536, `value.get value is ${bytes(got.value)} bytes`);
    } finally {
      await k.cleanup();
    }
  },
});

Deno.test({
  name:
    "V-RENDER-1: the render of a table 20 columns wide (220 scalars) holds every column name in its first line [ignored: needs a SPEC decision: V-RENDER-1 cuts every line of a table render to 80 scalars and also wants the first line to contain every column name in column order, which no table wider than 80 can have; the kernel cuts (first line 'column_00  column_01 … column_06  co…')]",
  ignore: true,
  fn: async () => {
    const k = await startKernel();
    try {
      const conn = await k.attach();
      const names = Array.from({ length: 20 }, (_, i) => `column_${String(i).padStart(2, "0")}`);
      const row = JSON.stringify(Object.fromEntries(names.map((n) => [n, 1])));
      const r = await exec(conn, `printf '[%s]' '${row}'`, { position: "value" });
      const first = (r.render as string).split("\n")[0];
      for (const name of names) assert.ok(first.includes(name), `${name} in ${first}`);
    } finally {
      await k.cleanup();
    }
  },
});
