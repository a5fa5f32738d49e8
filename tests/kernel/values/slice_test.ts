import assert from "node:assert/strict";
import { BlobValue } from "../../../src/kernel/values/blob_value.ts";
import { sliceValue } from "../../../src/kernel/values/slice.ts";
import { stdoutValue } from "../../../src/kernel/values/outcome.ts";
import { Table, TableRows } from "../../../src/kernel/values/value.ts";
import { ErrorCode, RpcError } from "../../../src/protocol/errors.ts";
import { capture, withCas } from "./_fixtures.ts";

const decoder = new TextDecoder();

Deno.test("lists by item, tables by row, str by scalar, bytes by byte, clamped (V-SLICE-1)", async () => {
  assert.deepEqual(await sliceValue([1, 2, 3, 4], 1, 3, "out:1", null), [2, 3]);
  assert.deepEqual(await sliceValue([1, 2, 3], 2, 99, "out:1", null), [3]);
  assert.deepEqual(await sliceValue([1, 2, 3], 7, 9, "out:1", null), []);
  assert.deepEqual(await sliceValue([1, 2, 3], 2, 1, "out:1", null), []);
  const table = new Table(["a"], [[1, 2, 3]], 3);
  const rows = await sliceValue(table, 1, 5, "out:1", null) as Table;
  assert.deepEqual([rows.n, rows.columns[0]], [2, [2, 3]]);
  const rowList = await sliceValue(new TableRows(table), 0, 1, "out:1", null) as TableRows;
  assert.equal(rowList.table.n, 1);
  assert.equal(await sliceValue("a𝄞é b", 1, 3, "out:1", null), "𝄞é");
  assert.deepEqual(
    await sliceValue(new Uint8Array([1, 2, 3]), 1, 2, "out:1", null),
    new Uint8Array([2]),
  );
});

Deno.test("slicing other types is -32005 with {ref, path}", async () => {
  for (const v of [42, null, true, new Map()]) {
    await assert.rejects(
      sliceValue(v, 0, 1, "out:3", "out.x"),
      (e) =>
        e instanceof RpcError && e.code === ErrorCode.BAD_PATH_OR_SLICE &&
        JSON.stringify(e.data) === '{"ref":"out:3","path":"out.x"}',
    );
  }
});

Deno.test("CAS-backed str and bytes slice by streaming; small results come back in memory", async () => {
  await withCas(async (cas) => {
    const text = "€".repeat(30000) + "a\nb".repeat(30000);
    const big = stdoutValue(cas, await capture(cas, text)) as BlobValue;
    assert.ok(big instanceof BlobValue);
    assert.equal(await sliceValue(big, 29998, 30004, "out:1", null), "€€a\nba");
    const tail = await sliceValue(big, 30000, 999999, "out:1", null) as BlobValue;
    assert.ok(tail instanceof BlobValue);
    assert.equal(tail.scalars, 90000);
    assert.equal(await tail.lineCount(), 30000);
    assert.equal(decoder.decode(await tail.read(0, 5)), "a\nba\n");
    const empty = await sliceValue(big, 120000, 120005, "out:1", null);
    assert.equal(empty, "");
    const ascii = stdoutValue(cas, await capture(cas, "x".repeat(100000))) as BlobValue;
    assert.equal(await sliceValue(ascii, 99998, 100005, "out:1", null), "xx");
    const bytes = stdoutValue(
      cas,
      await capture(cas, new Uint8Array(70000).fill(0xff)),
    ) as BlobValue;
    assert.deepEqual(await sliceValue(bytes, 2, 5, "out:1", null), new Uint8Array(3).fill(0xff));
    const window = await sliceValue(bytes, 1, 69999, "out:1", null) as BlobValue;
    assert.deepEqual([window.kind, window.len], ["bytes", 69998]);
  });
});
