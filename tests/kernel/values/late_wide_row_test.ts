import assert from "node:assert/strict";
import { withKernel } from "../../_support/kernel.ts";
import { exec } from "../../_support/exec.ts";
import type { Rec } from "../../_support/rec.ts";

withKernel(
  "V-RENDER-1/K-BASH-10 a table of more than 32,768 rows whose last row is wider than every earlier one renders: `cat` of such a JSON file answered -32603 'cannot write the render and journal row to the state directory …: Invalid count value: -1' (a negative pad)",
  async (conn) => {
    // 40,000 rows of {"a":1,"b":1}, then one whose `a` is wider than any width seen before it
    const src = `{ printf '['; for i in $(seq 40000); do printf '{"a":1,"b":1},'; done; ` +
      `printf '{"a":"wider","b":2}]'; } > t.json && echo made`;
    await exec(conn, src);
    const r = await exec(conn, "cat t.json");
    const out = (r.value as Rec).out as Rec;
    assert.equal(out.of, "table");
    assert.equal(out.n, 40001);
    const render = r.render as string;
    assert.ok(render.startsWith("a  b\n─  ─\n1  1\n"), render.slice(0, 40));
    const last = await conn.request("value.get", { ref: r.ref, path: "out[40000]" }) as Rec;
    assert.deepEqual(last.value, {
      $: "record",
      v: { a: { $: "str", v: "wider" }, b: { $: "int", v: 2 } },
    });
  },
);
