// K-VAL-4: raw chunks of a str against a walk of its characters one by one.
import assert from "node:assert/strict";
import { rawChunk } from "../../../src/kernel/values/raw_chunk.ts";

/** The code-unit index at each character boundary of `s`, by UTF-8 byte position. */
function boundaries(s: string): Map<number, number> {
  const at = new Map<number, number>([[0, 0]]);
  let [i, pos] = [0, 0];
  for (const ch of s) { // a lone surrogate is a character of its own here, 3 bytes as U+FFFD
    const cp = ch.codePointAt(0)!;
    pos += cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4;
    i += ch.length;
    at.set(pos, i);
  }
  return at;
}

const PIECES = ["a", "é", "€", "😀", "\ud800", "\udc00", "x".repeat(40)];

/** A string of `n` random pieces, a surrogate pair now and then across 64 KiB boundaries. */
function randomText(n: number, random: () => number): string {
  let s = "";
  for (let k = 0; k < n; k++) s += PIECES[Math.floor(random() * PIECES.length)];
  return s;
}

Deno.test("K-VAL-4 raw chunks of a str are the whole characters of their byte range, or -32005 inside one, across the 64 KiB pieces they are encoded in", async () => {
  let seed = 7;
  const random = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
  for (const n of [5, 50, 40_000]) {
    const s = randomText(n, random);
    const at = boundaries(s);
    const total = [...at.keys()].reduce((a, b) => Math.max(a, b), 0);
    for (let round = 0; round < 60; round++) {
      const offset = Math.floor(random() * (total + 1));
      const size = 1 + Math.floor(random() * (round % 2 ? 200_000 : 9));
      const start = at.get(offset);
      if (start === undefined) {
        await assert.rejects(rawChunk(s, offset, size, "out:1", null), /inside a UTF-8 sequence/);
        continue;
      }
      let end = Math.min(total, offset + size);
      while (!at.has(end)) end--;
      const got = await rawChunk(s, offset, size, "out:1", null);
      assert.deepEqual(got, {
        raw: s.slice(start, at.get(end)),
        offset,
        len: end - offset,
        total,
        next: end < total ? end : null,
      }, `n ${n} offset ${offset} size ${size}`);
    }
  }
});
