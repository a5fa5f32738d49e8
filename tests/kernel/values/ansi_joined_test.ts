// V-RENDER-2: removing one escape sequence must not leave another behind. An ESC that starts no
// sequence (another ESC, a C1 control or a newline after it) was kept, and once the sequence after
// it was removed it joined the next character: `ESC ESC[31m red` rendered as `ESC r` + `ed`, a
// two-byte ESC sequence (RIS-like resets, charset switches) for a tty:false client.
import assert from "node:assert/strict";
import { stripAnsi } from "../../../src/kernel/values/ansi.ts";
import { sharedKernel } from "../../_support/kernel.ts";
import { exec } from "../../_support/exec.ts";
import type { Rec } from "../../_support/rec.ts";

// deno-lint-ignore no-control-regex
const INTRODUCER = /[\x1b\x80-\x9f]/;
/** The cases share one kernel, each on a session of its own. */
const sharedCase = sharedKernel();

const CASES: [string, string][] = [
  ["\x1b\x1b[31mred\x1b[0m", "red"],
  ["a\x1b\x1b]0;title\x07b", "ab"],
  ["\x1b\u0085x", "x"],
  ["b\x1b\nc", "b\nc"],
  ["end\x1b", "end"],
  ["\x1b\x1b\x1bcz", "z"],
];

Deno.test("V-RENDER-2: stripAnsi leaves no ESC or C1 control, so no removal joins a new sequence", () => {
  for (const [text, want] of CASES) {
    const got = stripAnsi(text);
    assert.equal(INTRODUCER.test(got), false, `${JSON.stringify(text)} → ${JSON.stringify(got)}`);
    assert.equal(got, want, JSON.stringify(text));
  }
});

sharedCase(
  "V-RENDER-2: the render of `printf '\\e\\e[31mred\\e[0m'` for a tty:false client holds no escape (it was ESC 'r' + 'ed'), in exec, value.get render and render_head",
  async (conn) => {
    const r = await exec(conn, `printf '\\033\\033[31mred\\033[0m'`, { position: "value" });
    assert.equal(((r.value as Rec).out as Rec).v, "\x1b\x1b[31mred\x1b[0m", "the value is kept");
    assert.equal(r.render, "red");
    const got = await conn.request("value.get", { ref: r.ref, format: "render" }) as Rec;
    assert.equal(got.render, "red");
    const big = await exec(
      conn,
      `for i in $(seq 3000); do printf '\\033\\033[31mred\\033[0m\\n'; done`,
      { position: "value" },
    );
    const ref = (big.value as Rec).out as Rec;
    assert.equal(ref.$, "ref");
    assert.equal(INTRODUCER.test(ref.render_head as string), false);
    assert.equal(INTRODUCER.test(big.render as string), false);
  },
);

sharedCase(
  "V-RENDER-2: an exec's render for a tty:false client drops the 8-bit CSI and OSC (U+009B, U+009D) as value.get's render does (exec kept them whenever the output held no ESC)",
  async (conn) => {
    const r = await exec(
      conn,
      `printf '\\302\\23331mred\\302\\2330m \\302\\2350;title\\007x'`,
      { position: "value" },
    );
    assert.equal(((r.value as Rec).out as Rec).v, "\u009b31mred\u009b0m \u009d0;title\x07x");
    assert.equal(r.render, "red x");
    const got = await conn.request("value.get", { ref: r.ref, format: "render" }) as Rec;
    assert.equal(got.render, "red x");
  },
);

sharedCase(
  "V-RENDER-2: for a tty:false client the 8-bit CSI and OSC inside a record, list or table (member names, items, cells, column names) leave no C1 control in the exec render, value.get render or render_head (they reached the client raw: only a top-level str was stripped)",
  async (conn) => {
    // U+009B (CSI) and U+009D (OSC) as UTF-8 in JSON strings, and as \u escapes.
    const csi = "\\302\\233";
    const osc = "\\302\\235";
    const sources = [
      `printf '{"a":"${csi}2Jx","${osc}0;t\\\\u0007k":1,"l":["\\\\u009b1m"]}'`,
      `printf '["${csi}31mred","\\\\u009d8;;http://a\\\\u009clink"]'`,
      `printf '[{"${csi}c":"${csi}1m","d":{"e":"${osc}0;t\\\\u0007"}}]'`,
      `for i in $(seq 700); do printf '{"${csi}k":"${csi}1m"}\\n'; done | paste -sd, | sed 's/^/[/;s/$/]/'`,
    ];
    for (const src of sources) {
      const r = await exec(conn, src, { position: "value" });
      const out = (r.value as Rec).out as Rec;
      assert.ok(
        JSON.stringify(out).includes("\u009b") || out.$ === "ref",
        `${src}: the value keeps C1`,
      );
      assert.equal(INTRODUCER.test(r.render as string), false, `${src}: exec render ${r.render}`);
      const got = await conn.request("value.get", { ref: r.ref, format: "render" }) as Rec;
      assert.equal(INTRODUCER.test(got.render as string), false, `${src}: value.get render`);
      const small = await conn.request("value.get", {
        ref: r.ref,
        path: "out",
        elide: { max_bytes: 1 },
      }) as Rec;
      const head = (small.value as Rec).render_head as string;
      assert.equal(INTRODUCER.test(head), false, `${src}: render_head ${JSON.stringify(head)}`);
    }
  },
);
