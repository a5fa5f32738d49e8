/**
 * K-BASH-5, E-4: the kernel reads every run's `declare -p` listing on its event loop, so reading it
 * must cost in proportion to its length whatever its lines hold.
 */
import assert from "node:assert/strict";
import { declarations, valueWords } from "../../../src/kernel/bash/declare_listing.ts";

/** The listing bash writes for an indexed array of `n` elements `x`, between two scalars. */
function arrayListing(n: number): string {
  const elements: string[] = [];
  for (let i = 0; i < n; i++) elements.push(`[${i}]="x"`);
  return `declare -- A="1"\ndeclare -a a=(${elements.join(" ")})\ndeclare -- b="2"\n`;
}

Deno.test("K-BASH-5/E-4 the listing of a million-element array (mapfile of a 1M-line file) is read in one pass: each quoted word searched for the line's end again, quadratic (100K elements 0.6 s of the event loop, 1M over a minute)", () => {
  const listing = arrayListing(1_000_000);
  const all = declarations(listing);
  assert.deepEqual(all.map((d) => d.name), ["A", "a", "b"]);
  assert.equal(all[1].flags, "a");
  const words = valueWords(all[1].value!);
  assert.equal(words?.length, 2_000_000);
  assert.equal(words?.[1_999_998], "999999");
  assert.equal(words?.[1_999_999], '"x"');
});

Deno.test("K-BASH-5 a listing's statements end at line breaks outside quotes only", () => {
  const listing =
    "declare -- A=\"a\nb\"\ndeclare -- B=$'c\\'\n'\ndeclare -a C=([0]=\"x\" [1]=$'y\\n')\ndeclare -i D\n";
  const all = declarations(listing);
  assert.deepEqual(all.map((d) => [d.flags, d.name, d.value]), [
    ["-", "A", '"a\nb"'],
    ["-", "B", "$'c\\'\n'"],
    ["a", "C", `([0]="x" [1]=$'y\\n')`],
    ["i", "D", null],
  ]);
});
