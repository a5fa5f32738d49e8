import assert from "node:assert/strict";
import { elideValue, resolveBudget } from "../../../src/kernel/values/elide.ts";
import { parseJsonValue } from "../../../src/kernel/values/json_value.ts";
import { ValueUri } from "../../../src/kernel/values/uri.ts";
import { Table, type Value } from "../../../src/kernel/values/value.ts";
import { wireBytes, wireWithin } from "../../../src/kernel/values/wire.ts";
import { ELIDE_DEFAULTS } from "../../../src/protocol/limits.ts";
import { bytesRead } from "../../_support/proc.ts";
import { outcomeOf, sparseStr, withCas } from "./_fixtures.ts";

const URI = new ValueUri("shoal://out/12");
const elide = (v: Value, budget = ELIDE_DEFAULTS) => elideValue(v, budget, URI, false);

function json(text: string): Value {
  return parseJsonValue(text)!.value;
}

Deno.test("resolveBudget: defaults, overrides, max_bytes clamped and copied to max_bytes_raw (V-ELIDE-2)", () => {
  assert.deepEqual(resolveBudget(), ELIDE_DEFAULTS);
  assert.deepEqual(resolveBudget({ max_rows: 3, max_items: 1000000 }), {
    ...ELIDE_DEFAULTS,
    max_rows: 3,
    max_items: 1000000,
  });
  assert.deepEqual(resolveBudget({ max_bytes: 100 }), {
    ...ELIDE_DEFAULTS,
    max_bytes: 100,
    max_bytes_raw: 100,
  });
  assert.deepEqual(resolveBudget({ max_bytes: 10 ** 9 }), {
    ...ELIDE_DEFAULTS,
    max_bytes: 65536,
    max_bytes_raw: 65536,
  });
});

Deno.test("values within the budget travel whole, exactly up to max_bytes (V-ELIDE-4)", async () => {
  assert.deepEqual(await elide(42), { $: "int", v: 42 });
  const v = json('{"a":[1,2.5,"x",null,true,{"b":[]}],"c":1.0}');
  const wire = await elide(v);
  assert.equal(wire.$, "record");
  const size = wireBytes(wire);
  assert.deepEqual(await elide(v, { ...ELIDE_DEFAULTS, max_bytes: size }), wire);
  assert.equal((await elide(v, { ...ELIDE_DEFAULTS, max_bytes: size - 1 })).$, "ref");
});

Deno.test("the bounded wire builder is exact: fits at its encoded size, not one byte below", () => {
  let seed = 5;
  const random = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
  const samples = [
    '"é𝄞\\u0000"',
    "[]",
    "{}",
    '[{"a":1},{"b":"x"}]',
    '{"k":[1.5,-2,1e3]}',
    "[[[]]]",
    "[{}]",
  ];
  for (let n = 0; n < 200; n++) {
    const text = samples[Math.floor(random() * samples.length)];
    const v = json(`[${text},${samples[n % samples.length]}]`);
    const full = wireWithin(v, 1 << 30)!;
    const size = wireBytes(full);
    assert.deepEqual(wireWithin(v, size), full);
    assert.equal(wireWithin(v, size - 1), null);
  }
});

Deno.test("a 2,000,000-int list is elided with n and a 5-item preview", async () => {
  const text = "[" + Array.from({ length: 2_000_000 }, (_, i) => i).join(",") + "]";
  const list = json(text);
  const ref = await elideValue(list, ELIDE_DEFAULTS, new ValueUri("shoal://out/12", "out"), false);
  assert.deepEqual(ref, {
    $: "ref",
    uri: "shoal://out/12?path=out",
    of: "list",
    n: 2_000_000,
    preview: { $: "list", v: [0, 1, 2, 3, 4].map((v) => ({ $: "int", v })) },
    render_head: "0\n1\n2\n3\n4",
  });
});

Deno.test("a table over max_rows is a ref with column tags, a 5-row preview and a render head (V-ELIDE-5)", async () => {
  const rows = Array.from({ length: 2000 }, (_, i) => ({ name: `f${i}`, size: i + 1, note: null }));
  const ref = await elide(json(JSON.stringify(rows)));
  assert.equal(ref.of, "table");
  assert.equal(ref.n, 2000);
  assert.deepEqual(ref.cols, { name: "str", size: "int", note: "null" });
  assert.deepEqual(ref.preview, {
    $: "table",
    cols: {
      name: ["f0", "f1", "f2", "f3", "f4"].map((v) => ({ $: "str", v })),
      size: [1, 2, 3, 4, 5].map((v) => ({ $: "int", v })),
      note: Array(5).fill({ $: "null" }),
    },
    n: 5,
  });
  assert.equal(
    ref.render_head,
    "name  size  note\n────  ────  ────\nf0    1     null\nf1    2     null\nf2    3     null\nf3    4     null\nf4    5     null",
  );
  assert.equal(
    (await elide(new Table(["a"], [[1, 2]], 2), { ...ELIDE_DEFAULTS, max_rows: 1 })).$,
    "ref",
  );
});

Deno.test("preview elements are elided with the preview budget and their own suffixes", async () => {
  const big = "z".repeat(2000);
  const list = await elideValue(
    json(JSON.stringify([big, 1, 2, 3, 4, 5])),
    { ...ELIDE_DEFAULTS, max_items: 3 },
    new ValueUri("shoal://out/12", "items[2].out"),
    false,
  );
  const first = (list.preview as { v: Record<string, unknown>[] }).v[0];
  assert.equal(first.$, "ref");
  assert.equal(first.uri, "shoal://out/12?path=items[2].out[0]");
  assert.equal(first.n, 2000);
  assert.deepEqual(first.preview, { $: "str", v: "z".repeat(256) });
  const record = await elide(json(JSON.stringify({ "a b": big, k: [1] })), {
    ...ELIDE_DEFAULTS,
    max_bytes: 100,
  });
  const member = (record.preview as { v: Record<string, Record<string, unknown>> }).v["a b"];
  assert.equal(member.uri, "shoal://out/12?path=[%22a%20b%22]");
  const sliced = await elideValue(
    json(JSON.stringify([1, big])),
    { ...ELIDE_DEFAULTS, max_bytes: 100 },
    new ValueUri("shoal://out/12", "out", [10, 12]),
    false,
  );
  assert.equal(sliced.uri, "shoal://out/12?path=out&slice=10..12");
  assert.equal(
    (sliced.preview as { v: Record<string, unknown>[] }).v[1].uri,
    "shoal://out/12?path=out[11]",
  );
});

Deno.test("bytes longer than max_bytes_raw are a ref with a 256-byte preview", async () => {
  const bytes = new Uint8Array(5000).map((_, i) => i % 256);
  const ref = await elide(bytes);
  assert.equal(ref.of, "bytes");
  assert.equal(ref.n, 5000);
  assert.equal((ref.preview as { v: string }).v, btoa(String.fromCharCode(...bytes.slice(0, 256))));
  assert.equal(ref.render_head, "<256 bytes>");
  assert.deepEqual(await elide(new Uint8Array([1, 2])), { $: "bytes", v: "AQI=" });
  assert.equal((await elide(new Uint8Array(300), resolveBudget({ max_bytes: 299 }))).$, "ref");
});

Deno.test("an outcome is never elided whole: out and err are decided separately (V-ELIDE-3)", async () => {
  await withCas(async (cas) => {
    const o = await outcomeOf(
      cas,
      JSON.stringify(Array.from({ length: 600 }, (_, i) => i)),
      "warn\n",
      1,
    );
    const wire = await elideValue(o, ELIDE_DEFAULTS, new ValueUri("shoal://out/12"), false);
    assert.deepEqual(Object.keys(wire), [
      "$",
      "ok",
      "status",
      "signal",
      "out",
      "err",
      "dur_ns",
      "pid",
      "cmd",
    ]);
    assert.deepEqual([wire.$, wire.ok, wire.status, wire.signal, wire.dur_ns, wire.pid, wire.cmd], [
      "outcome",
      false,
      1,
      null,
      36012345,
      4242,
      "cmd",
    ]);
    assert.equal((wire.out as { uri: string }).uri, "shoal://out/12?path=out");
    assert.deepEqual(wire.err, { $: "str", v: "warn\n" });
    const errRef = await elideValue(
      o,
      { ...ELIDE_DEFAULTS, max_bytes: 10 },
      new ValueUri("shoal://out/12", "x"),
      false,
    );
    assert.equal((errRef.err as { uri: string }).uri, "shoal://out/12?path=x.err");
  });
});

Deno.test("an outcome whose members each fit still stays under the hard cap (V-ELIDE-6)", async () => {
  await withCas(async (cas) => {
    const o = await outcomeOf(cas, JSON.stringify("o".repeat(40000)), "e".repeat(30000), 0);
    const wire = await elideValue(
      o,
      resolveBudget({ max_bytes: 65536 }),
      new ValueUri("shoal://out/1"),
      false,
    );
    assert.ok(wireBytes(wire) <= 65536);
    assert.equal((wire.out as { $: string }).$, "ref");
    assert.deepEqual(wire.err, { $: "str", v: "e".repeat(30000) });
  });
});

Deno.test("a ref that would pass 65536 bytes loses its preview and render head (V-ELIDE-6)", async () => {
  const row = Object.fromEntries(Array.from({ length: 3000 }, (_, i) => [`c${i}`, i]));
  const ref = await elide(json(JSON.stringify([row, row, row, row, row, row])));
  assert.equal(ref.$, "ref");
  assert.ok(wireBytes(ref) <= 65536);
  assert.deepEqual(ref.preview, { $: "null" });
  assert.equal(ref.render_head, "");
  assert.equal(Object.keys(ref.cols as object).length, 3000);
});

Deno.test("nested refs deeper than two preview levels carry no preview", async () => {
  const deep = json(JSON.stringify([[["a".repeat(2000)]]]));
  const ref = await elide(deep, { ...ELIDE_DEFAULTS, max_bytes: 50 });
  const level1 = (ref.preview as { v: Record<string, unknown>[] }).v[0];
  assert.equal(level1.$, "ref");
  assert.equal(level1.uri, "shoal://out/12?path=[0]");
  const level2 = (level1.preview as { v: Record<string, unknown>[] }).v[0];
  assert.equal(level2.$, "ref");
  assert.equal(level2.uri, "shoal://out/12?path=[0][0]");
  assert.deepEqual(level2.preview, { $: "null" });
  assert.equal(level2.render_head, "");
});

Deno.test("a multi-GB CAS-backed str is elided after reading only its head", async () => {
  await withCas(async (cas) => {
    const size = 5 * 1024 ** 3;
    const huge = await sparseStr(cas, "first line\n", size, 1);
    const before = bytesRead();
    const ref = await elideValue(huge, ELIDE_DEFAULTS, new ValueUri("shoal://out/9", "out"), false);
    // Where the OS counts reads (Linux), only the head was read.
    if (before !== null) assert.ok(bytesRead()! - before < 1024 * 1024);
    assert.equal(ref.n, size);
    assert.equal(ref.of, "str");
    assert.equal((ref.preview as { v: string }).v, "first line\n" + "\0".repeat(245));
    assert.equal(ref.render_head, "first line\n" + "\0".repeat(79) + "…");
  });
});
