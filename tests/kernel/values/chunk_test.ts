import assert from "node:assert/strict";
import { encodeChunk } from "../../../src/kernel/values/chunk.ts";

const encoder = new TextEncoder();

Deno.test("V-CHUNK-1 (1): a valid UTF-8 range is text", () => {
  assert.deepEqual(encodeChunk(encoder.encode("héllo 𝄞")), {
    encoding: "utf8",
    data: "héllo 𝄞",
    len: 11,
  });
  assert.deepEqual(encodeChunk(new Uint8Array()), { encoding: "utf8", data: "", len: 0 });
});

Deno.test("V-CHUNK-1 (2): a range ending inside a completable sequence is text over the shorter range", () => {
  const bytes = encoder.encode("a𝄞");
  for (const cut of [2, 3, 4]) {
    assert.deepEqual(encodeChunk(bytes.subarray(0, cut)), { encoding: "utf8", data: "a", len: 1 });
  }
});

Deno.test("V-CHUNK-1 (3): otherwise the whole range is base64", () => {
  // Only an incomplete sequence: nothing would remain.
  assert.deepEqual(encodeChunk(new Uint8Array([0xe2, 0x82])), {
    encoding: "base64",
    data: "4oI=",
    len: 2,
  });
  // Invalid before the end.
  assert.deepEqual(encodeChunk(new Uint8Array([0xff, 0x61])), {
    encoding: "base64",
    data: "/2E=",
    len: 2,
  });
  // A trailing prefix no continuation could complete (E0 must be followed by A0..BF).
  assert.deepEqual(encodeChunk(new Uint8Array([0x61, 0xe0, 0x80])), {
    encoding: "base64",
    data: "YeCA",
    len: 3,
  });
  // Invalid early and incomplete at the end.
  assert.equal(encodeChunk(new Uint8Array([0xc0, 0x61, 0xe2])).encoding, "base64");
});

Deno.test("V-CHUNK-1: a range starting inside a character is base64", () => {
  const bytes = encoder.encode("€abc");
  assert.equal(encodeChunk(bytes.subarray(1)).encoding, "base64");
});
