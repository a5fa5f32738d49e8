import assert from "node:assert/strict";
import { parsePath, selectPath } from "../../../src/kernel/values/path.ts";
import { Duration, Table, TableRows, type Value } from "../../../src/kernel/values/value.ts";
import { ErrorCode, RpcError } from "../../../src/protocol/errors.ts";
import { capture, outcomeOf, withCas } from "./_fixtures.ts";
import { outcomeValue } from "../../../src/kernel/values/outcome.ts";

const TABLE = '[{"name":"a","size":1},{"name":"b"}]';

function badPathError(path: string) {
  return (e: unknown) =>
    e instanceof RpcError && e.code === ErrorCode.BAD_PATH_OR_SLICE &&
    JSON.stringify(e.data) === JSON.stringify({ ref: "out:1", path });
}

Deno.test("the V-PATH-1 grammar accepts its examples", () => {
  assert.deepEqual(parsePath(".rows[0].name", "out:1"), [
    { kind: "name", name: "rows", quoted: false },
    { kind: "index", index: 0 },
    { kind: "name", name: "name", quoted: false },
  ]);
  assert.deepEqual(parsePath("rows[0].name", "out:1"), parsePath(".rows[0].name", "out:1"));
  assert.deepEqual(parsePath("out[3]", "out:1")[1], { kind: "index", index: 3 });
  assert.deepEqual(parsePath('.out["a.b"]', "out:1")[1], {
    kind: "name",
    name: "a.b",
    quoted: true,
  });
  assert.deepEqual(parsePath(".[2..5]", "out:1"), [{ kind: "range", from: 2, to: 5 }]);
  assert.deepEqual(parsePath('["x\\"]y"][007]', "out:1"), [
    { kind: "name", name: 'x"]y', quoted: true },
    { kind: "index", index: 7 },
  ]);
  assert.deepEqual(parsePath("", "out:1"), []);
});

Deno.test("deviations from the grammar are -32005 with {ref, path} (V-PATH-1, K-VAL-5)", () => {
  for (
    const bad of [
      ".",
      "a.",
      "..a",
      "a..b",
      "a.[0]",
      "[",
      "[0",
      "[x]",
      "[-1]",
      "[1..]",
      "[ 1]",
      '["a"',
      '["a"x]',
      '["\\q"]',
      "[0]x",
      "[9007199254740992]",
    ]
  ) {
    assert.throws(() => parsePath(bad, "out:1"), badPathError(bad), bad);
  }
});

Deno.test('tables: .rows, columns, ["rows"], row index and ranges on an outcome\'s out (V-PATH-2/3)', async () => {
  await withCas(async (cas) => {
    const o = await outcomeOf(cas, TABLE);
    assert.equal(selectPath(o, ".out.rows[1].size", "out:1"), null);
    assert.equal(selectPath(o, ".out.name[0]", "out:1"), "a");
    assert.equal(selectPath(o, "name[1]", "out:1"), "b", "other names fall through to out");
    assert.equal(selectPath(o, '["size"][0]', "out:1"), 1);
    assert.ok(selectPath(o, "rows", "out:1") instanceof TableRows);
    const row = selectPath(o, "out[1]", "out:1") as Map<string, Value>;
    assert.deepEqual([...row], [["name", "b"], ["size", null]]);
    const range = selectPath(o, "out[1..9]", "out:1") as Table;
    assert.equal(range.n, 1);
    assert.equal((selectPath(o, "out[2..1]", "out:1") as Table).n, 0);
    assert.equal((selectPath(o, "out.rows[0..1]", "out:1") as TableRows).table.n, 1);
    assert.throws(() => selectPath(o, 'out["rows"]', "out:1"), badPathError('out["rows"]'));
    for (const bad of ["out[2]", "out.nope", "out.name.x", "out.name[5]", "[0]"]) {
      assert.throws(() => selectPath(o, bad, "out:1"), badPathError(bad), bad);
    }
  });
});

Deno.test("a column named rows is reached only by the quoted form", async () => {
  await withCas(async (cas) => {
    const o = await outcomeOf(cas, '[{"rows":5}]');
    assert.deepEqual(selectPath(o, 'out["rows"]', "out:1"), [5]);
    assert.ok(selectPath(o, "out.rows", "out:1") instanceof TableRows);
  });
});

Deno.test("outcome fields, raw streams and the duration tag (V-PATH-2)", async () => {
  await withCas(async (cas) => {
    const o = await outcomeOf(cas, '{"a":{"b":[10,20]}}\n', "oops\n", 2);
    assert.equal(selectPath(o, "ok", "out:1"), false);
    assert.equal(selectPath(o, ".status", "out:1"), 2);
    assert.equal(selectPath(o, "signal", "out:1"), null);
    assert.equal(selectPath(o, "pid", "out:1"), 4242);
    assert.equal(selectPath(o, "cmd", "out:1"), "cmd");
    assert.deepEqual(selectPath(o, "dur_ns", "out:1"), new Duration(36012345));
    assert.equal(selectPath(o, "stdout", "out:1"), '{"a":{"b":[10,20]}}\n');
    assert.equal(selectPath(o, "stderr", "out:1"), "oops\n");
    assert.equal(selectPath(o, "err", "out:1"), "oops\n");
    assert.equal(selectPath(o, "a.b[1]", "out:1"), 20);
    assert.equal(selectPath(o, '.out["a"].b[0]', "out:1"), 10);
    assert.deepEqual(selectPath(o, "a.b[1..5]", "out:1"), [20]);
    assert.throws(() => selectPath(o, "a.b[2]", "out:1"), badPathError("a.b[2]"));
    assert.throws(() => selectPath(o, "status.x", "out:1"), badPathError("status.x"));
  });
});

Deno.test("V-PATH-2: an outcome without refused destinations looks net_refused up in out, as any name outside V-PATH-2's list (it answered [] whatever stdout's JSON held)", async () => {
  await withCas(async (cas) => {
    const o = await outcomeOf(cas, '{"net_refused":["mine"],"hosts":1}\n');
    assert.deepEqual(selectPath(o, "net_refused", "out:1"), ["mine"]);
    assert.deepEqual(selectPath(o, "net_refused[0]", "out:1"), "mine");
    const plain = await outcomeOf(cas, '{"hosts":1}\n');
    assert.throws(() => selectPath(plain, "net_refused", "out:1"), badPathError("net_refused"));
  });
});

Deno.test({
  name:
    "V-PATH-2 path net_refused of an outcome that refused a destination selects what stdout's JSON holds under that name, as any name outside V-PATH-2's list (it answered the outcome's net_refused, P-NET-2, which the outcome value itself carries, so stdout {\"net_refused\": …} was unreachable by path)",
  fn: async () => {
    await withCas(async (cas) => {
      const o = outcomeValue(cas, {
        status: 0,
        signal: null,
        out: await capture(cas, '{"net_refused":["mine"]}\n'),
        err: await capture(cas, ""),
        dur_ns: 1,
        pid: 1,
        cmd: "curl https://example.com",
        netRefused: ["example.com:443"],
      });
      assert.deepEqual(selectPath(o, "net_refused", "out:1"), ["mine"]);
    });
  },
});
