import assert from "node:assert/strict";
import { cutUtf8, utf8Length, utf8Prefix, utf8Suffix } from "../../src/protocol/utf8.ts";

const encoded = (s: string) => new TextEncoder().encode(s).length;

Deno.test("utf8Length counts as TextEncoder writes, a lone surrogate as U+FFFD", () => {
  for (const s of ["", "abc", "é", "€uro", "😀x", "\ud800", "a\udc00b", "😀".repeat(5)]) {
    assert.equal(utf8Length(s), encoded(s), JSON.stringify(s));
  }
  assert.equal(utf8Length("a😀b", 1, 3), 4);
});

Deno.test("utf8Prefix cuts at a scalar boundary, never inside a pair", () => {
  assert.equal(utf8Prefix("a😀b", 1), "a");
  assert.equal(utf8Prefix("a😀b", 4), "a");
  assert.equal(utf8Prefix("a😀b", 5), "a😀");
  assert.equal(utf8Prefix("abc", 10), "abc");
});

Deno.test("cutUtf8 leaves what fits and cuts the rest to the limit, … included", () => {
  assert.equal(cutUtf8("x".repeat(100), 100), "x".repeat(100));
  const cut = cutUtf8("x".repeat(101), 100);
  assert.equal(cut, "x".repeat(97) + "…");
  assert.equal(encoded(cut), 100);
  const emoji = cutUtf8("😀".repeat(100), 100);
  assert.ok(encoded(emoji) <= 100 && emoji.endsWith("…") && !emoji.includes("\ufffd"));
  assert.equal(cutUtf8(emoji, 100), emoji, "a cut string is not cut again");
});

Deno.test("utf8Suffix keeps the longest end that fits, never half a surrogate pair or a 3-byte character", () => {
  assert.equal(utf8Suffix("abc", 10), "abc");
  assert.equal(utf8Suffix("abc", 2), "bc");
  assert.equal(utf8Suffix("a😀", 3), "");
  assert.equal(utf8Suffix("a😀", 4), "😀");
  assert.equal(utf8Suffix("x€y", 3), "y");
  assert.equal(utf8Suffix("x€y", 4), "€y");
});
