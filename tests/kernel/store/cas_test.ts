import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { Cas, parseHash } from "../../../src/kernel/store/cas.ts";
import { ErrorCode, RpcError } from "../../../src/protocol/errors.ts";
import { withCas } from "../values/_fixtures.ts";

const encoder = new TextEncoder();
const HEX = "ab".repeat(32);

function sha256(bytes: Uint8Array): string {
  return createHash("sha256").update(bytes).digest("hex");
}

function isCode(code: number) {
  return (e: unknown) => e instanceof RpcError && e.code === code;
}

Deno.test("parseHash accepts sha256:<64 lowercase hex> and bare 64 hex, else -32602 (K-BLOB-1)", () => {
  assert.equal(parseHash(`sha256:${HEX}`), HEX);
  assert.equal(parseHash(HEX), HEX);
  assert.equal(parseHash(HEX.toUpperCase()), HEX);
  for (
    const bad of [
      `sha256:${HEX.toUpperCase()}`,
      `sha256:${HEX}0`,
      HEX.slice(1),
      `md5:${HEX}`,
      "",
      `sha256:${"g".repeat(64)}`,
    ]
  ) {
    assert.throws(() => parseHash(bad), isCode(ErrorCode.INVALID_PARAMS), bad);
  }
});

Deno.test("put stores at cas/<h0h1>/<h2h3>/<hex> with 0600 files and 0700 dirs (J-4, G-STATE-4)", async () => {
  await withCas(async (cas, dir) => {
    const bytes = encoder.encode("hello\n");
    const hash = await cas.put(bytes);
    const hex = sha256(bytes);
    assert.equal(hash, `sha256:${hex}`);
    const path = `${dir}/cas/${hex.slice(0, 2)}/${hex.slice(2, 4)}/${hex}`;
    assert.deepEqual(await Deno.readFile(path), bytes);
    assert.equal((await Deno.stat(path)).mode! & 0o777, 0o600);
    for (
      const d of [
        `${dir}/cas`,
        `${dir}/tmp`,
        `${dir}/cas/${hex.slice(0, 2)}`,
        `${dir}/cas/${hex.slice(0, 2)}/${hex.slice(2, 4)}`,
      ]
    ) {
      assert.equal((await Deno.stat(d)).mode! & 0o777, 0o700, d);
    }
    assert.equal(await cas.put(bytes), hash, "storing the same bytes again is success");
    assert.deepEqual([...Deno.readDirSync(`${dir}/tmp`)], [], "no staging file is left behind");
  });
});

Deno.test("has, size and readRange serve exact clamped ranges; unknown blob is -32004", async () => {
  await withCas(async (cas) => {
    const hash = await cas.put(encoder.encode("0123456789"));
    assert.equal(await cas.has(hash), true);
    assert.equal(await cas.size(hash.slice(7)), 10);
    assert.equal(new TextDecoder().decode(await cas.readRange(hash, 3, 4)), "3456");
    assert.equal(new TextDecoder().decode(await cas.readRange(hash, 8, 100)), "89");
    assert.equal((await cas.readRange(hash, 10, 5)).length, 0);
    assert.equal(await cas.has(`sha256:${HEX}`), false);
    assert.equal(await cas.size(`sha256:${HEX}`), null);
    await assert.rejects(cas.readRange(`sha256:${HEX}`, 0, 1), isCode(ErrorCode.UNKNOWN_REF));
    const chunks: string[] = [];
    for await (const c of cas.stream(hash, 2, 9, 3)) chunks.push(new TextDecoder().decode(c));
    assert.deepEqual(chunks, ["234", "567", "8"]);
  });
});

Deno.test("adopting a spool whose hash is already stored succeeds and removes the spool (J-4)", async () => {
  await withCas(async (cas, dir) => {
    const bytes = encoder.encode("same");
    const hash = await cas.put(bytes);
    const spool = cas.tmpPath();
    await Deno.writeFile(spool, bytes, { mode: 0o600 });
    const stored = Deno.statSync(cas.blobPath(hash)).ino;
    await cas.adopt(spool, hash);
    assert.deepEqual([...Deno.readDirSync(`${dir}/tmp`)], []);
    assert.deepEqual(await cas.readRange(hash, 0, 10), bytes);
    // The stored blob stays: a spool renamed over it would be flushed to disk at once (issue 10).
    assert.equal(Deno.statSync(cas.blobPath(hash)).ino, stored);
  });
});

Deno.test("a store reopened on the same state dir still serves its blobs (J-5)", async () => {
  await withCas(async (cas, dir) => {
    const hash = await cas.put(encoder.encode("kept"));
    const again = await Cas.open(dir);
    assert.equal(await again.size(hash), 4);
  });
});
