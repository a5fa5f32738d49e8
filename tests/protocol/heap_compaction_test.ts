// Issue 33: an idle process compacts its V8 heap and gives the freed pages back, when it grew.
import assert from "node:assert/strict";
import { heapCompaction } from "../../src/protocol/heap_compaction.ts";
import { REPO } from "../_support/sandbox.ts";

Deno.test("without --expose-gc there is no compaction", () => {
  assert.equal(typeof (globalThis as { gc?: unknown }).gc, "undefined", "deno test exposes no gc");
  assert.equal(heapCompaction(1 << 20), null);
});

/**
 * Run under --expose-gc with a counting `gc`: the first compaction runs; one with the heap as it
 * was runs no collection; after 32 MiB of objects were made and dropped it runs and the heap's
 * committed size falls by most of that. Prints the counts and the sizes in MiB.
 */
const PROBE = `
import { heapCompaction } from "${REPO}/src/protocol/heap_compaction.ts";
const real = globalThis.gc;
let collections = 0;
globalThis.gc = (options) => { collections++; real(options); };
const mib = () => Deno.memoryUsage().heapTotal / 2 ** 20;
const compact = heapCompaction(4 << 20);
compact();
const first = collections;
compact();
const unchanged = collections;
let junk = Array.from({ length: 4 * 2 ** 20 / 8 }, (_, i) => ({ i, s: "x" + i }));
const grown = mib();
junk = null;
compact();
console.log(JSON.stringify({ first, unchanged, last: collections, grown, after: mib() }));
`;

Deno.test("with --expose-gc a compaction runs first, then only after the heap grew, and gives the pages back", async () => {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["eval", "--no-config", "--v8-flags=--expose-gc,--max-semi-space-size=1", PROBE],
    stderr: "inherit",
  }).output();
  assert.ok(out.success);
  const r = JSON.parse(new TextDecoder().decode(out.stdout));
  assert.equal(r.first, 1, "the first compaction collects");
  assert.equal(r.unchanged, 1, "a heap that did not grow is not collected again");
  assert.equal(r.last, 2, "a heap that grew is");
  assert.ok(r.grown - r.after > 16, `heap ${r.grown} MiB → ${r.after} MiB after compaction`);
});
