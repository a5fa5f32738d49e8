// Issue 2 through the real stack (SDK client → shoal-mcp → autostarted kernel → bash): session
// state persists between tool calls, JSON stdout is typed, and long output is bounded with a
// marker whose characters shoal_get fetches exactly.
import assert from "node:assert/strict";
import { byteLength } from "../_support/bytes.ts";
import type { Rec } from "../_support/rec.ts";
import { mcpTest } from "./_mcp.ts";

function out(sc: Rec): unknown {
  return (sc.value as Rec).out;
}

mcpTest(
  "cd and export persist between shoal_exec calls; echo 42 is an int (K-BASH-5, K-BASH-10)",
  async (mcp) => {
    await mcp.ok("shoal_exec", { src: "cd /tmp" });
    assert.deepEqual(out(await mcp.ok("shoal_exec", { src: "pwd" })), { $: "str", v: "/tmp\n" });
    await mcp.ok("shoal_exec", { src: "export A=1" });
    assert.deepEqual(out(await mcp.ok("shoal_exec", { src: 'echo "A=$A"' })), {
      $: "str",
      v: "A=1\n",
    });
    assert.deepEqual(out(await mcp.ok("shoal_exec", { src: "echo 42" })), { $: "int", v: 42 });
  },
);

mcpTest(
  "seq 1 70000: text ≤ 64 KiB ending with the marker, and shoal_get slices exactly those characters (V-RENDER-3, V-SLICE-1)",
  async (mcp) => {
    const r = await mcp.call("shoal_exec", { src: "seq 1 70000" });
    assert.equal(r.isError, false);
    const text = r.content[0].text as string;
    assert.ok(byteLength(text) <= 65536, `text is ${byteLength(text)} bytes`);
    const n = String(r.structuredContent.ref).slice("out:".length);
    const marker = new RegExp(`…\\((\\d+) more lines, fetch via shoal://out/${n}\\)$`);
    const m = marker.exec(text);
    assert.ok(m, text.slice(-200));
    const kept = text.slice(0, text.lastIndexOf("…")).split("\n").length - 1;
    assert.equal(kept + Number(m[1]), 70000);
    const full = Array.from({ length: 70000 }, (_, i) => `${i + 1}\n`).join("");
    const got = await mcp.ok("shoal_get", {
      ref: r.structuredContent.ref,
      path: "out",
      slice: [
        123456,
        123500,
      ],
    });
    assert.deepEqual(got.value, { $: "str", v: full.slice(123456, 123500) });
  },
);
