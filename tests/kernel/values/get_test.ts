import assert from "node:assert/strict";
import { Buffer } from "node:buffer";
import { valueGet } from "../../../src/kernel/values/get.ts";
import { CaptureSink } from "../../../src/kernel/store/capture.ts";
import type { Cas } from "../../../src/kernel/store/cas.ts";
import { BlobValue } from "../../../src/kernel/values/blob_value.ts";
import { stdoutValue } from "../../../src/kernel/values/outcome.ts";
import { valueGetParams } from "../../../src/kernel/values/params.ts";
import type { Value } from "../../../src/kernel/values/value.ts";
import { ErrorCode, RpcError } from "../../../src/protocol/errors.ts";
import { outcomeOf, withCas } from "./_fixtures.ts";

const CTX = { uri: "shoal://out/12", tty: false };
const encoder = new TextEncoder();

/** Results are checked field by field, so the test reads them loosely typed. */
// deno-lint-ignore no-explicit-any
type Loose = any;

function get(v: Value, params: Record<string, unknown>): Promise<Loose> {
  return valueGet(v, valueGetParams.parse({ ref: "out:12", ...params }), CTX);
}

function badPath(path: string | null) {
  return (e: unknown) =>
    e instanceof RpcError && e.code === ErrorCode.BAD_PATH_OR_SLICE &&
    JSON.stringify(e.data) === JSON.stringify({ ref: "out:12", path });
}

/** Fetches every raw chunk from offset 0 and checks each against the budget. */
async function fetchAll(v: Value, params: Record<string, unknown>, budget: number) {
  const parts: Uint8Array[] = [];
  let offset: number | null = 0;
  let total = -1;
  while (offset !== null) {
    const r = await get(v, { ...params, format: "raw", offset }) as Record<string, unknown>;
    const chunk = "raw" in r
      ? encoder.encode(r.raw as string)
      : Buffer.from(r.raw_base64 as string, "base64");
    assert.equal(chunk.length, r.len);
    assert.ok(chunk.length <= budget, `chunk of ${chunk.length} bytes`);
    assert.equal(r.offset, offset);
    total = r.total as number;
    parts.push(new Uint8Array(chunk));
    offset = r.next as number | null;
    if (offset !== null) assert.equal(offset, (r.offset as number) + chunk.length);
  }
  return { bytes: new Uint8Array(Buffer.concat(parts)), total };
}

Deno.test("json format: path then slice, the uri names both (K-VAL-1/2)", async () => {
  await withCas(async (cas) => {
    const o = await outcomeOf(
      cas,
      JSON.stringify({ "a b": Array.from({ length: 600 }, (_, i) => i) }),
    );
    assert.deepEqual(await get(o, { path: 'out["a b"]', slice: [1000, 1010] }), {
      ref: "out:12",
      value: { $: "list", v: [] },
    });
    const r = await get(o, { path: 'out["a b"]', slice: [3, 5] });
    assert.deepEqual(r, {
      ref: "out:12",
      value: { $: "list", v: [{ $: "int", v: 3 }, { $: "int", v: 4 }] },
    });
    const elided = await get(o, { path: 'out["a b"]', elide: { max_items: 10 } }) as {
      value: { uri: string };
    };
    assert.equal(elided.value.uri, "shoal://out/12?path=out[%22a%20b%22]");
    const sliced = await get(o, {
      path: 'out["a b"]',
      slice: [0, 100],
      elide: { max_items: 10 },
    }) as {
      value: { uri: string; preview: { v: { uri?: string }[] } };
    };
    assert.equal(sliced.value.uri, "shoal://out/12?path=out[%22a%20b%22]&slice=0..100");
  });
});

Deno.test("a 2,000,000-int list: elided with n, slice [1000,1010] gives items 1000..1009", async () => {
  await withCas(async (cas) => {
    const o = await outcomeOf(
      cas,
      "[" + Array.from({ length: 2_000_000 }, (_, i) => i).join(",") + "]\n",
    );
    const whole = await get(o, {}) as { value: { out: { $: string; n: number; uri: string } } };
    assert.deepEqual([whole.value.out.$, whole.value.out.n, whole.value.out.uri], [
      "ref",
      2_000_000,
      "shoal://out/12?path=out",
    ]);
    assert.deepEqual(await get(o, { path: "out", slice: [1000, 1010] }), {
      ref: "out:12",
      value: { $: "list", v: Array.from({ length: 10 }, (_, i) => ({ $: "int", v: 1000 + i })) },
    });
    assert.deepEqual((await get(o, { path: "out[1999999]" }) as { value: unknown }).value, {
      $: "int",
      v: 1999999,
    });
  });
});

/** Runs a bash script and captures its stdout through a real pipe into a capture sink. */
async function bashStdout(cas: Cas, script: string): Promise<Value> {
  const child = new Deno.Command("bash", { args: ["-c", script], stdout: "piped" }).spawn();
  const sink = await CaptureSink.open(cas);
  for await (const chunk of child.stdout) await sink.write(chunk);
  assert.equal((await child.status).code, 0);
  return stdoutValue(cas, await sink.finish());
}

Deno.test("2,000,000 ints printed by bash: compact JSON is a list; with ', ' it passes 16 MiB and is a str", async () => {
  await withCas(async (cas) => {
    // awk, not seq: BSD seq (macOS) prints 1000000 and up as 1e+06
    const ints = (sep: string) =>
      `awk 'BEGIN { printf "["; for (i = 0; i < 2000000; i++) printf "%s%d", (i ? "${sep}" : ""), i; print "]" }'`;
    const list = await bashStdout(cas, ints(","));
    assert.ok(Array.isArray(list));
    assert.deepEqual((await get(list, { slice: [1000, 1003] })).value, {
      $: "list",
      v: [1000, 1001, 1002].map((v) => ({ $: "int", v })),
    });
    const text = await bashStdout(cas, ints(", "));
    assert.ok(text instanceof BlobValue && text.kind === "str");
    assert.deepEqual((await get(text, { slice: [0, 6] })).value, { $: "str", v: "[0, 1," });
  });
});

Deno.test("render format is bounded with the same uri (K-VAL-3)", async () => {
  await withCas(async (cas) => {
    const o = await outcomeOf(cas, Array.from({ length: 70000 }, (_, i) => `row ${i}`).join("\n"));
    const r = await get(o, { path: "stdout", format: "render" }) as { render: string };
    assert.ok(encoder.encode(r.render).length <= 65536);
    assert.match(
      r.render,
      /^row 0\nrow 1\n[^]*…\(\d+ more lines, fetch via shoal:\/\/out\/12\?path=stdout\)$/,
    );
    assert.deepEqual(await get(o, { format: "render", slice: [0, 2], path: "stdout" }), {
      ref: "out:12",
      render: "ro",
    });
  });
});

Deno.test("raw on a 10 MiB str: bounded chunks with total and next that reassemble the bytes (K-VAL-4)", async () => {
  await withCas(async (cas) => {
    const text = "héllo wörld €𝄞\n".repeat(10 * 1024 * 1024 / 20);
    const expected = encoder.encode(text);
    const o = await outcomeOf(cas, text);
    const first = await get(o, {
      path: "out",
      format: "raw",
      elide: { max_bytes: 1000 },
    }) as Record<string, unknown>;
    assert.equal(first.total, expected.length);
    assert.equal(first.offset, 0);
    assert.ok((first.len as number) <= 1000 && (first.len as number) >= 997);
    const all = await fetchAll(o, { path: "out" }, 65536);
    assert.equal(all.total, expected.length);
    assert.deepEqual(all.bytes, expected);
    const small = await fetchAll(
      o,
      { path: "out", slice: [0, 3000], elide: { max_bytes: 333 } },
      333,
    );
    assert.equal(new TextDecoder().decode(small.bytes), [...text].slice(0, 3000).join(""));
  });
});

Deno.test("raw on str: offset inside a character or past the end is -32005; the end moves back", async () => {
  await withCas(async (cas) => {
    const o = await outcomeOf(cas, '"a€b"');
    assert.deepEqual(
      await get(o, { path: "out", format: "raw", offset: 0, elide: { max_bytes: 3 } }),
      {
        ref: "out:12",
        raw: "a",
        offset: 0,
        len: 1,
        total: 5,
        next: 1,
      },
    );
    assert.deepEqual(await get(o, { path: "out", format: "raw", offset: 1 }), {
      ref: "out:12",
      raw: "€b",
      offset: 1,
      len: 4,
      total: 5,
      next: null,
    });
    assert.deepEqual(await get(o, { path: "out", format: "raw", offset: 5 }), {
      ref: "out:12",
      raw: "",
      offset: 5,
      len: 0,
      total: 5,
      next: null,
    });
    await assert.rejects(get(o, { path: "out", format: "raw", offset: 2 }), badPath("out"));
    await assert.rejects(get(o, { path: "out", format: "raw", offset: 6 }), badPath("out"));
    const big = await outcomeOf(cas, "€".repeat(30000));
    await assert.rejects(get(big, { path: "out", format: "raw", offset: 1 }), badPath("out"));
    await assert.rejects(get(big, { path: "out", format: "raw", offset: 90001 }), badPath("out"));
  });
});

Deno.test("raw on bytes is base64 within the budget, in memory or in the CAS", async () => {
  await withCas(async (cas) => {
    for (const size of [5000, 200000]) {
      const bytes = new Uint8Array(size).map((_, i) => (i * 7) % 256);
      bytes[0] = 0xff;
      const o = await outcomeOf(cas, bytes);
      const first = await get(o, {
        path: "stdout",
        format: "raw",
        elide: { max_bytes: 4000 },
      }) as Record<string, unknown>;
      assert.equal(Buffer.from(first.raw_base64 as string, "base64").length, 4000);
      assert.deepEqual([first.total, first.next], [size, 4000]);
      const all = await fetchAll(o, { path: "stdout", elide: { max_bytes: 65536 } }, 65536);
      assert.deepEqual(all.bytes, bytes);
    }
  });
});

Deno.test("raw applies only to str and bytes; bad paths and slices are -32005 (K-VAL-5)", async () => {
  await withCas(async (cas) => {
    const o = await outcomeOf(cas, '{"n":42,"t":[{"a":1}]}');
    await assert.rejects(get(o, { path: "t", format: "raw" }), badPath("t"));
    await assert.rejects(get(o, { format: "raw" }), badPath(null));
    await assert.rejects(get(o, { path: "n.x" }), badPath("n.x"));
    await assert.rejects(get(o, { path: "t[1]" }), badPath("t[1]"));
    await assert.rejects(get(o, { path: "n", slice: [0, 1] }), badPath("n"));
    await assert.rejects(get(o, { path: "nope[" }), badPath("nope["));
  });
});

Deno.test("value.get params: types and ranges are -32602 material", () => {
  for (
    const bad of [
      {},
      { ref: 12 },
      { ref: "out:1", slice: [-1, 2] },
      { ref: "out:1", slice: [0.5, 2] },
      { ref: "out:1", slice: [0, 1e300] },
      { ref: "out:1", offset: 2 ** 53 },
      { ref: "out:1", slice: [1] },
      { ref: "out:1", format: "xml" },
      { ref: "out:1", elide: { max_bytes: -1 } },
      { ref: "out:1", offset: -1 },
      { ref: "out:1", path: 3 },
    ]
  ) {
    assert.equal(valueGetParams.safeParse(bad).success, false, JSON.stringify(bad));
  }
  assert.deepEqual(valueGetParams.parse({ ref: "out:1", extra: true }), {
    ref: "out:1",
    format: "json",
    offset: 0,
  });
});
