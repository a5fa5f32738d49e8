import assert from "node:assert/strict";
import { cutDescription, DESCRIPTION_JSON_BYTES } from "../../src/mcp/resources.ts";
import { byteLength } from "../_support/bytes.ts";

/** Bytes of the JSON string of `s`, as the facade writes it. */
const jsonBytes = (s: string) => byteLength(JSON.stringify(s));

const PIECES = ["a", "é", "€", "😀", "\x01", "\n", '"', "\\", "\ud800", " "];

Deno.test("M-RES-1: a listed resource's description is cut at a scalar, ends in …, and its JSON string fits DESCRIPTION_JSON_BYTES whatever it escapes", () => {
  for (let round = 0; round < 2000; round++) {
    const n = Math.floor(Math.random() * 120);
    let text = "";
    for (let i = 0; i < n; i++) text += PIECES[Math.floor(Math.random() * PIECES.length)];
    const cut = cutDescription(text);
    const size = jsonBytes(cut);
    assert.ok(size <= DESCRIPTION_JSON_BYTES, `${JSON.stringify(text)}: ${size} bytes`);
    if (jsonBytes(text) <= DESCRIPTION_JSON_BYTES) assert.equal(cut, text);
    else {
      assert.ok(cut.endsWith("…"));
      const head = cut.slice(0, -1);
      assert.ok(text.startsWith(head), "a prefix of the text");
      // Never the high half of a pair the text held whole.
      const last = head.charCodeAt(head.length - 1);
      const next = text.charCodeAt(head.length);
      assert.ok(!(last >= 0xd800 && last <= 0xdbff && next >= 0xdc00 && next <= 0xdfff));
      // The longest such cut: one more scalar would not fit.
      const more = [...text.slice(head.length)][0];
      assert.ok(jsonBytes(head + more + "…") > DESCRIPTION_JSON_BYTES);
    }
  }
});
