// Issue 33: what the content store keeps in memory per blob stays bounded however many it holds.
import assert from "node:assert/strict";
import { REPO } from "../../_support/sandbox.ts";

/**
 * Run under --expose-gc: stores 4,500 blobs (more than the store remembers as sound), then 4,500
 * more, reading the V8 heap used (after a full collection) at each point, then reads back every
 * 500th blob. Prints the heap in KiB and how many blobs were read back intact.
 */
const PROBE = `
import { Cas } from "${REPO}/src/kernel/store/cas.ts";
const dir = Deno.args[0];
const cas = await Cas.open(dir);
const kib = () => { gc(); gc(); return Deno.memoryUsage().heapUsed / 1024; };
const encoder = new TextEncoder();
const kept = new Map();
const store = (from, to) => {
  for (let i = from; i < to; i++) {
    const hash = cas.put(encoder.encode("blob " + i));
    if (i % 500 === 0) kept.set(i, hash);
  }
};
store(0, 4500);
const before = kib();
store(4500, 9000);
const after = kib();
let intact = 0;
for (const [i, hash] of kept) {
  if (new TextDecoder().decode(await Deno.readFile(cas.blobPath(hash))) === "blob " + i) intact++;
}
console.log(JSON.stringify({ before, after, intact }));
`;

Deno.test("the store's memory does not grow with the blobs it holds: 4,500 more add under 128 KiB of heap", async () => {
  const dir = await Deno.makeTempDir({ prefix: "shoal-cas-memory-" });
  try {
    const out = await new Deno.Command(Deno.execPath(), {
      args: ["eval", "--no-config", "--v8-flags=--expose-gc", PROBE, dir],
      stderr: "inherit",
    }).output();
    assert.ok(out.success);
    const r = JSON.parse(new TextDecoder().decode(out.stdout));
    assert.equal(r.intact, 18, "every blob read back is intact");
    assert.ok(
      r.after - r.before < 128,
      `heap ${r.before.toFixed(0)} KiB → ${r.after.toFixed(0)} KiB`,
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
