import assert from "node:assert/strict";
import { Utf8Scanner } from "../../../src/kernel/store/utf8_scanner.ts";

const encoder = new TextEncoder();
const strict = new TextDecoder("utf-8", { fatal: true });

function scanInPieces(bytes: Uint8Array, cuts: number[]): Utf8Scanner {
  const scanner = new Utf8Scanner();
  let at = 0;
  for (const cut of [...cuts, bytes.length]) {
    scanner.push(bytes.subarray(at, cut));
    at = cut;
  }
  return scanner;
}

Deno.test("counts scalars and newlines of valid text split at every byte boundary", () => {
  const text = "a\né€\n𝄞z\u0000\u{10ffff}\n";
  const bytes = encoder.encode(text);
  for (let cut = 0; cut <= bytes.length; cut++) {
    const scanner = scanInPieces(bytes, [cut]);
    assert.equal(scanner.complete, true, `cut at ${cut}`);
    assert.equal(scanner.scalars, [...text].length);
    assert.equal(scanner.lines, 3);
  }
});

Deno.test("rejects overlongs, surrogates, code points above U+10FFFF and stray continuations", () => {
  for (
    const bad of [
      [0xc0, 0x80],
      [0xc1, 0xbf],
      [0xe0, 0x80, 0x80],
      [0xed, 0xa0, 0x80],
      [0xf0, 0x80, 0x80, 0x80],
      [0xf4, 0x90, 0x80, 0x80],
      [0xf5, 0x80, 0x80, 0x80],
      [0x80],
      [0x61, 0xbf],
      [0xe2, 0x82, 0x0a],
    ]
  ) {
    const scanner = scanInPieces(new Uint8Array(bad), [1]);
    assert.equal(scanner.valid, false, JSON.stringify(bad));
    assert.equal(scanner.complete, false);
  }
});

Deno.test("an unfinished final sequence is valid but not complete, with its pending bytes", () => {
  const scanner = new Utf8Scanner();
  scanner.push(new Uint8Array([0x61, 0xf0, 0x9d, 0x84]));
  assert.equal(scanner.valid, true);
  assert.equal(scanner.complete, false);
  assert.equal(scanner.pending, 3);
  scanner.push(new Uint8Array([0x9e]));
  assert.equal(scanner.complete, true);
  assert.equal(scanner.scalars, 2);
});

Deno.test("newlines are still counted after the input turns invalid", () => {
  const scanner = scanInPieces(new Uint8Array([0x0a, 0xff, 0x0a, 0x61, 0x0a]), [2]);
  assert.equal(scanner.valid, false);
  assert.equal(scanner.lines, 3);
});

Deno.test("agrees with a strict TextDecoder on random byte strings", () => {
  let seed = 7;
  const random = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
  const alphabet = [
    0x41,
    0x0a,
    0x7f,
    0x80,
    0xbf,
    0xc2,
    0xdf,
    0xe0,
    0xa0,
    0xed,
    0x9f,
    0xef,
    0xf0,
    0x90,
    0xf4,
    0x8f,
    0xff,
  ];
  for (let n = 0; n < 3000; n++) {
    const bytes = Uint8Array.from(
      { length: Math.floor(random() * 8) },
      () => alphabet[Math.floor(random() * alphabet.length)],
    );
    let expected = true;
    try {
      strict.decode(bytes);
    } catch {
      expected = false;
    }
    const scanner = scanInPieces(bytes, [Math.floor(random() * (bytes.length + 1))]);
    assert.equal(scanner.complete, expected, Array.from(bytes).join(","));
    if (expected) assert.equal(scanner.scalars, [...strict.decode(bytes)].length);
  }
});
