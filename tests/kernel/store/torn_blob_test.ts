// A blob file shorter than its name says (what a power cut can leave of a blob renamed into
// place before its data reached the disk): the store must not keep serving it as the whole blob
// once the same content is stored again (J-3, J-4, K-BLOB-2).
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { startKernel } from "../../_support/kernel.ts";
import type { Rec } from "../../_support/rec.ts";
import { sandbox } from "../../_support/sandbox.ts";

const encoder = new TextEncoder();

/** Plants, under the state directory of the sandbox at `dir`, a blob file named for `bytes` holding only their first half. */
async function plantTorn(dir: string, bytes: Uint8Array): Promise<string> {
  const hex = createHash("sha256").update(bytes).digest("hex");
  const fan = `${dir}/state/shoal/cas/${hex.slice(0, 2)}/${hex.slice(2, 4)}`;
  await Deno.mkdir(fan, { recursive: true, mode: 0o700 });
  await Deno.writeFile(`${fan}/${hex}`, bytes.slice(0, bytes.length >> 1), { mode: 0o600 });
  return `sha256:${hex}`;
}

Deno.test("J-4/K-BLOB-2 a torn blob file (shorter than its content) is replaced when that content is stored again: the row's stdout blob then serves every byte it records, small (held) and spooled (2 MiB) output alike", async () => {
  const box = await sandbox();
  const small = encoder.encode("torn-small\n");
  const big = encoder.encode("y\n".repeat(1024 * 1024));
  const smallHash = await plantTorn(box.dir, small);
  const bigHash = await plantTorn(box.dir, big);
  const k = await startKernel([], box);
  try {
    const conn = await k.attach();
    await conn.request("exec", { src: "echo torn-small", position: "value" });
    await conn.request("exec", { src: "yes | head -n 1048576", position: "value" });
    const rows = await conn.request("journal.query", {}) as Rec[];
    const stdout = (row: Rec) => (row.outputs as Rec[]).find((o) => o.kind === "stdout")!;
    assert.deepEqual(
      rows.map((row) => [stdout(row).hash, stdout(row).len]),
      [[bigHash, big.length], [smallHash, small.length]],
    );
    for (const [hash, bytes] of [[smallHash, small], [bigHash, big]] as const) {
      const got = await conn.request("blob.get", {
        hash,
        offset: bytes.length - 4,
        length: 4,
      }) as Rec;
      assert.equal(got.len, bytes.length, `${hash} serves ${got.len} of ${bytes.length} bytes`);
    }
  } finally {
    await k.cleanup();
  }
});

/** Overwrites, under the state directory of the sandbox at `dir`, the blob file of `hash` with `bytes`. */
async function damage(dir: string, hash: string, bytes: Uint8Array): Promise<void> {
  const hex = hash.slice(-64);
  const path = `${dir}/state/shoal/cas/${hex.slice(0, 2)}/${hex.slice(2, 4)}/${hex}`;
  await Deno.writeFile(path, bytes, { mode: 0o600 });
}

Deno.test("J-4/K-BLOB-2/K-BLOB-3 a blob file of an earlier kernel whose bytes no longer hash to its name (torn by a power cut: short, or its length of zeros) is not served as that blob: blob.get answers -32004, and storing the content again serves it whole", async () => {
  const box = await sandbox();
  const first = await startKernel([], box);
  const hashes: string[] = [];
  try {
    const conn = await first.attach();
    for (const src of ["echo torn-short", "echo torn-zeros", "seq 1 200000"]) {
      await conn.request("exec", { src });
      const [row] = await conn.request("journal.query", { limit: 1 }) as Rec[];
      hashes.push((row.outputs as Rec[])[0].hash as string);
    }
  } finally {
    await first.stop();
  }
  const [short, zeros, big] = hashes;
  await damage(box.dir, short, encoder.encode("torn"));
  await damage(box.dir, zeros, new Uint8Array(encoder.encode("torn-zeros\n").length));
  await damage(box.dir, big, new Uint8Array(1_288_895));
  const k = await startKernel([], box);
  try {
    const conn = await k.attach();
    for (const hash of hashes) {
      const e = await conn.request("blob.get", { hash, length: 16 }).then(
        (got) => ({ code: 0, got }),
        (e) => ({ code: e.code, got: null }),
      );
      assert.equal(e.code, -32004, `${hash}: ${JSON.stringify(e.got)}`);
    }
    // the same content stored again is served whole
    await conn.request("exec", { src: "echo torn-zeros" });
    const got = await conn.request("blob.get", { hash: zeros }) as Rec;
    assert.deepEqual(got.value, { $: "str", v: "torn-zeros\n" });
  } finally {
    await k.cleanup();
  }
});
