// Issue 13: stdout JSON nested far deeper than any value the kernel types (VALUE_NESTING_LIMIT)
// through the real stack (SDK client → shoal-mcp → autostarted kernel → bash). Each call gets a
// bounded answer, the facade's connection stays open, and a second facade is unaffected.
import assert from "node:assert/strict";
import { VALUE_NESTING_LIMIT } from "../../src/protocol/limits.ts";
import { byteLength } from "../_support/bytes.ts";
import type { Rec } from "../_support/rec.ts";
import { connectMcp, mcpTest } from "./_mcp.ts";

/** Bash that prints `depth` nested arrays, or objects `{"a":…1…}`, with coreutils only. */
function deepSource(depth: number, shape: "arrays" | "objects"): string {
  return shape === "arrays"
    ? `head -c ${depth} /dev/zero | tr '\\0' '['; head -c ${depth} /dev/zero | tr '\\0' ']'`
    : `yes '{"a":' | head -n ${depth} | tr -d '\\n'; printf 1; ` +
      `head -c ${depth} /dev/zero | tr '\\0' '}'`;
}

const WHOLE = { elide: { max_bytes: 65536 } };

/** The tag of an elided or whole tagged value. */
function tagOf(w: Rec): string {
  return (w.$ === "ref" ? w.of : w.$) as string;
}

mcpTest(
  "stdout JSON nested 2,500, 6,000 and 100,000 levels deep is a str: exec, shoal_get and resources/read answer within 64 KiB, and another facade keeps working (issue 13)",
  async (mcp, box) => {
    const other = await connectMcp(box);
    try {
      for (const depth of [2500, 6000, 100_000]) {
        for (const shape of ["arrays", "objects"] as const) {
          const what = `${shape} ${depth}`;
          const run = await mcp.call("shoal_exec", { src: deepSource(depth, shape), ...WHOLE });
          assert.equal(run.isError, false, `${what}: ${JSON.stringify(run).slice(0, 300)}`);
          const value = run.structuredContent.value as Rec;
          assert.equal(tagOf(value.out as Rec), "str", what);
          assert.ok(byteLength(run) <= 4 * 65536, `${what}: reply ${byteLength(run)} bytes`);
          const ref = run.structuredContent.ref as string;
          const got = await mcp.call("shoal_get", { ref, path: "out", ...WHOLE });
          assert.equal(got.isError, false, what);
          assert.equal(tagOf(got.structuredContent.value as Rec), "str", what);
          const read = await mcp.read(`shoal://out/${ref.slice(4)}?path=out&format=raw`);
          const text = read.contents[0].text as string;
          assert.ok(text.startsWith(shape === "arrays" ? "[[[" : '{"a":{"a":'), what);
          assert.ok(byteLength(text) <= 65536, what);
        }
      }
      // The structure is typed up to the limit, and text beyond it.
      for (
        const [depth, tag] of [[VALUE_NESTING_LIMIT, "list"], [VALUE_NESTING_LIMIT + 1, "str"]]
      ) {
        const sc = await mcp.ok("shoal_exec", {
          src: deepSource(depth as number, "arrays"),
          ...WHOLE,
        });
        assert.equal(tagOf((sc.value as Rec).out as Rec), tag, `depth ${depth}`);
        const got = await mcp.ok("shoal_get", { ref: sc.ref, ...WHOLE });
        assert.equal((got.value as Rec).$, "outcome");
      }
      const same = await mcp.ok("shoal_exec", { src: "echo same" });
      assert.equal(((same.value as Rec).out as Rec).v, "same\n");
      const fine = await other.ok("shoal_exec", { src: "echo other" });
      assert.equal(((fine.value as Rec).out as Rec).v, "other\n");
    } finally {
      await other.close();
    }
  },
);
