import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { CaptureSink, HELD_OUTPUT_LIMIT } from "../../../src/kernel/store/capture.ts";
import { JSON_PARSE_LIMIT } from "../../../src/protocol/limits.ts";
import { rssBytes } from "../../_support/proc.ts";
import { withCas } from "../values/_fixtures.ts";

const encoder = new TextEncoder();
const MiB = 1024 * 1024;

function sha256(...parts: Uint8Array[]): string {
  const hash = createHash("sha256");
  for (const p of parts) hash.update(p);
  return "sha256:" + hash.digest("hex");
}

Deno.test("a capture describes its blob and keeps small output in memory (K-BASH-11)", async () => {
  await withCas(async (cas) => {
    const parts = [encoder.encode("héllo\nwor"), encoder.encode("ld 𝄞\n")];
    const sink = await CaptureSink.open(cas);
    for (const p of parts) await sink.write(p);
    assert.equal(sink.total, parts[0].length + parts[1].length);
    const { blob, bytes } = await sink.finish();
    assert.deepEqual(blob, {
      hash: sha256(...parts),
      len: sink.total,
      utf8: true,
      scalars: [..."héllo\nworld 𝄞\n"].length,
      lines: 2,
      truncated: false,
    });
    assert.equal(new TextDecoder().decode(bytes!), "héllo\nworld 𝄞\n");
    assert.deepEqual(await cas.readRange(blob.hash, 0, 100), bytes);
  });
});

Deno.test("small output is held in memory, readable while running, and stored without a spool", async () => {
  await withCas(async (cas, dir) => {
    const sink = await CaptureSink.open(cas);
    await sink.write(encoder.encode("building step 1\n"));
    await sink.write(encoder.encode("step 2\n"));
    assert.deepEqual([...Deno.readDirSync(`${dir}/tmp`)], [], "no spool file");
    assert.equal(new TextDecoder().decode(await sink.readRange(9, 100)), "step 1\nstep 2\n");
    assert.equal((await sink.readRange(23, 10)).length, 0, "a cursor at the end reads nothing");
    const { blob, bytes } = await sink.finish();
    assert.equal(blob.hash, sha256(encoder.encode("building step 1\nstep 2\n")));
    assert.deepEqual(await cas.readRange(blob.hash, 0, 100), bytes);
    assert.deepEqual([...Deno.readDirSync(`${dir}/tmp`)], []);
  });
});

Deno.test("the spool is a 0600 file under tmp/ readable while running, then moves into the CAS", async () => {
  await withCas(async (cas, dir) => {
    const sink = await CaptureSink.open(cas);
    const head = new Uint8Array(HELD_OUTPUT_LIMIT).fill(0x2e);
    await sink.write(head);
    assert.deepEqual([...Deno.readDirSync(`${dir}/tmp`)], [], "still held in memory");
    await sink.write(encoder.encode("building step 1\n"));
    const spools = [...Deno.readDirSync(`${dir}/tmp`)];
    assert.equal(spools.length, 1);
    assert.equal(Deno.statSync(`${dir}/tmp/${spools[0].name}`).mode! & 0o777, 0o600);
    const at = HELD_OUTPUT_LIMIT;
    assert.equal(new TextDecoder().decode(await sink.readRange(at + 9, 100)), "step 1\n");
    assert.deepEqual(await sink.readRange(at - 2, 3), encoder.encode("..b"));
    assert.equal(
      (await sink.readRange(at + 16, 10)).length,
      0,
      "a cursor at the end reads nothing",
    );
    await sink.write(encoder.encode("step 2\n"));
    const reading = sink.readRange(at, 8);
    const { blob } = await sink.finish();
    assert.equal(new TextDecoder().decode(await reading), "building");
    assert.deepEqual([...Deno.readDirSync(`${dir}/tmp`)], []);
    assert.equal(new TextDecoder().decode(await sink.readRange(at + 16, 100)), "step 2\n");
    assert.equal(blob.len, at + 23);
    assert.equal(blob.hash, sha256(head, encoder.encode("building step 1\nstep 2\n")));
  });
});

Deno.test("non-UTF-8 output is flagged, with no scalar count", async () => {
  await withCas(async (cas) => {
    const sink = await CaptureSink.open(cas);
    await sink.write(new Uint8Array([0x61, 0x0a, 0xff, 0x0a]));
    const { blob } = await sink.finish();
    assert.equal(blob.utf8, false);
    assert.equal(blob.scalars, 0);
    assert.equal(blob.lines, 2);
  });
});

Deno.test("output ending inside a UTF-8 sequence is not UTF-8", async () => {
  await withCas(async (cas) => {
    const sink = await CaptureSink.open(cas);
    await sink.write(new Uint8Array([0x61, 0xe2, 0x82]));
    assert.equal((await sink.finish()).blob.utf8, false);
  });
});

Deno.test("bytes beyond the cap are discarded and the capture is truncated (K-BASH-12)", async () => {
  await withCas(async (cas) => {
    const sink = await CaptureSink.open(cas, 10);
    await sink.write(encoder.encode("0123456"));
    await sink.write(encoder.encode("789abc"));
    await sink.write(encoder.encode("more"));
    assert.equal(sink.truncated, true);
    const { blob, bytes } = await sink.finish();
    assert.equal(blob.len, 10);
    assert.equal(blob.truncated, true);
    assert.equal(blob.hash, sha256(encoder.encode("0123456789")));
    assert.equal(new TextDecoder().decode(bytes!), "0123456789");
  });
});

Deno.test("output above 16 MiB is not kept in memory (K-BASH-10)", async () => {
  await withCas(async (cas) => {
    const sink = await CaptureSink.open(cas);
    const chunk = new Uint8Array(MiB).fill(0x61);
    for (let i = 0; i < JSON_PARSE_LIMIT / MiB; i++) await sink.write(chunk);
    await sink.write(new Uint8Array([0x62]));
    const { blob, bytes } = await sink.finish();
    assert.equal(bytes, null);
    assert.equal(blob.len, JSON_PARSE_LIMIT + 1);
    assert.equal(blob.scalars, JSON_PARSE_LIMIT + 1);
  });
});

Deno.test("a write before the previous one resolved is refused; abort removes the spool", async () => {
  await withCas(async (cas, dir) => {
    const sink = await CaptureSink.open(cas);
    const first = sink.write(encoder.encode("a"));
    await assert.rejects(sink.write(encoder.encode("b")), /previous write/);
    await first;
    await sink.abort();
    assert.deepEqual([...Deno.readDirSync(`${dir}/tmp`)], []);
    assert.deepEqual([...Deno.readDirSync(`${dir}/cas`)], []);
  });
});

Deno.test("capturing 512 MiB raises resident memory by less than 64 MiB (K-BASH-11)", async () => {
  await withCas(async (cas) => {
    const chunk = new Uint8Array(64 * 1024);
    for (let i = 0; i < chunk.length; i++) chunk[i] = 0x61 + (i % 26);
    chunk[chunk.length - 1] = 0x0a;
    const sink = await CaptureSink.open(cas);
    const before = rssBytes(Deno.pid);
    let peak = before;
    const count = (512 * MiB) / chunk.length;
    for (let i = 0; i < count; i++) {
      await sink.write(chunk);
      if (i % 256 === 0) peak = Math.max(peak, rssBytes(Deno.pid));
    }
    const { blob, bytes } = await sink.finish();
    peak = Math.max(peak, rssBytes(Deno.pid));
    assert.equal(blob.len, 512 * MiB);
    assert.equal(blob.lines, count);
    assert.equal(blob.utf8, true);
    assert.equal(bytes, null);
    assert.ok(peak - before < 64 * MiB, `RSS grew by ${((peak - before) / MiB).toFixed(1)} MiB`);
  });
});
