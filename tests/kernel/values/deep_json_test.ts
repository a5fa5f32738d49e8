// Issue 13: stdout JSON nested deeper than VALUE_NESTING_LIMIT over the kernel socket: exec,
// value.get in every format and task outcomes answer with a str, the connection stays open and
// other connections are unaffected.
import assert from "node:assert/strict";
import { VALUE_NESTING_LIMIT } from "../../../src/protocol/limits.ts";
import { exec } from "../../_support/exec.ts";
import { kernelTest } from "../../_support/kernel.ts";
import type { Rec } from "../../_support/rec.ts";

/** Bash that prints `depth` nested arrays with coreutils only. */
function arrays(depth: number): string {
  return `head -c ${depth} /dev/zero | tr '\\0' '['; head -c ${depth} /dev/zero | tr '\\0' ']'`;
}

/** Bash that prints `depth` nested objects `{"a":…1…}` with coreutils only. */
function objects(depth: number): string {
  return `yes '{"a":' | head -n ${depth} | tr -d '\\n'; printf 1; ` +
    `head -c ${depth} /dev/zero | tr '\\0' '}'`;
}

function tagOf(w: Rec): string {
  return (w.$ === "ref" ? w.of : w.$) as string;
}

const WHOLE = { elide: { max_bytes: 65536 } };

kernelTest(
  "stdout JSON nested 2,500, 6,000 and 100,000 levels deep is a str in exec, value.get json/render/raw and task outcomes (issue 13)",
  async (k) => {
    const conn = await k.attach();
    const other = await k.attach("other");
    for (const depth of [2500, 6000, 100_000]) {
      for (const src of [arrays(depth), objects(depth)]) {
        const what = `${src.slice(0, 30)} ${depth}`;
        const r = await exec(conn, src, WHOLE);
        assert.equal(tagOf((r.value as Rec).out as Rec), "str", what);
        for (const params of [WHOLE, { path: "out", ...WHOLE }, { format: "render" }]) {
          const got = await conn.request("value.get", { ref: r.ref, ...params }) as Rec;
          assert.ok(JSON.stringify(got).length <= 2 * 65536, what);
        }
        const raw = await conn.request("value.get", {
          ref: r.ref,
          path: "out",
          format: "raw",
        }) as Rec;
        assert.equal(raw.total, 2 * depth + (src.startsWith("yes") ? 4 * depth + 1 : 0), what);
        const task = await exec(conn, src, { async: true });
        const done = await conn.request("task.await", { task: task.task, ...WHOLE }) as Rec;
        const result = done.result as Rec;
        assert.equal(tagOf((result.value as Rec).out as Rec), "str", what);
      }
    }
    for (const [depth, tag] of [[VALUE_NESTING_LIMIT, "list"], [VALUE_NESTING_LIMIT + 1, "str"]]) {
      const r = await exec(conn, objects(depth as number), WHOLE);
      assert.equal(tagOf((r.value as Rec).out as Rec), tag === "list" ? "record" : tag);
      const whole = await conn.request("value.get", { ref: r.ref, ...WHOLE }) as Rec;
      assert.equal((whole.value as Rec).$, "outcome");
    }
    const fine = await exec(other, "echo other");
    assert.deepEqual((fine.value as Rec).out, { $: "str", v: "other\n" });
  },
);
