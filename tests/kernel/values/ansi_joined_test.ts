// V-RENDER-2: removing one escape sequence must not leave another behind. An ESC that starts no
// sequence (another ESC, a C1 control or a newline after it) was kept, and once the sequence after
// it was removed it joined the next character: `ESC ESC[31m red` rendered as `ESC r` + `ed`, a
// two-byte ESC sequence (RIS-like resets, charset switches) for a tty:false client.
import assert from "node:assert/strict";
import { stripAnsi } from "../../../src/kernel/values/ansi.ts";
import { withKernel } from "../../_support/kernel.ts";
import { exec } from "../../_support/exec.ts";
import type { Rec } from "../../_support/rec.ts";

// deno-lint-ignore no-control-regex
const INTRODUCER = /[\x1b\x80-\x9f]/;

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

withKernel(
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

withKernel(
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
