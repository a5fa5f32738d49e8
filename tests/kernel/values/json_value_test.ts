import assert from "node:assert/strict";
import {
  TABLE_CELL_LIMIT,
  VALUE_NESTING_LIMIT,
  VALUE_NODE_LIMIT,
} from "../../../src/protocol/limits.ts";
import { parseJsonValue } from "../../../src/kernel/values/json_value.ts";
import { IntegralFloat, Table, tagOf, type Value } from "../../../src/kernel/values/value.ts";

function parse(text: string): Value {
  const parsed = parseJsonValue(text);
  assert.ok(parsed, `not JSON: ${text}`);
  return parsed.value;
}

/** A comparable form: floats marked, record member order kept, tables columnar. */
function shape(v: Value): unknown {
  if (typeof v === "number") return Number.isInteger(v) ? v : { float: v };
  if (v instanceof IntegralFloat) return { float: v.v };
  if (Array.isArray(v)) return v.map(shape);
  if (v instanceof Map) return { record: [...v].map(([k, x]) => [k, shape(x)]) };
  if (v instanceof Table) {
    return { table: v.cols.map((c, i) => [c, v.columns[i].map(shape)]), n: v.n };
  }
  return v;
}

/** What JSON.parse gives, in the same comparable form (no int/float distinction). */
function plain(v: Value): unknown {
  if (v instanceof IntegralFloat) return v.v;
  if (Array.isArray(v)) return v.map(plain);
  if (v instanceof Map) return Object.fromEntries([...v].map(([k, x]) => [k, plain(x)]));
  if (v instanceof Table) {
    return Array.from({ length: v.n }, (_, r) =>
      Object.fromEntries(
        v.cols.map((c, i) => [c, plain(v.columns[i][r])]).filter(([, x]) => x !== undefined),
      ));
  }
  return v;
}

Deno.test("numbers are int or float by their literal (V-JSON-1)", () => {
  const cases: [string, string, number][] = [
    ["42", "int", 42],
    ["-0", "int", 0],
    ["1.0", "float", 1],
    ["1e3", "float", 1000],
    ["1E3", "float", 1000],
    ["2.5", "float", 2.5],
    ["-7e-1", "float", -0.7],
    ["9007199254740991", "int", 9007199254740991],
    ["-9007199254740991", "int", -9007199254740991],
    ["9007199254740992", "float", 9007199254740992],
    ["123456789012345678901", "float", 123456789012345678901],
    ["100000000000000", "int", 100000000000000],
  ];
  for (const [text, tag, value] of cases) {
    const v = parse(text);
    assert.equal(tagOf(v), tag, text);
    assert.equal(v instanceof IntegralFloat ? v.v : v, value, text);
  }
});

Deno.test("nesting up to VALUE_NESTING_LIMIT is a value, one level deeper is not JSON, however deep (issue 13)", () => {
  const n = VALUE_NESTING_LIMIT;
  const nested = (open: string, close: string, depth: number, leaf = "") =>
    open.repeat(depth) + leaf + close.repeat(depth);
  let v = parse(nested("[", "]", n));
  for (let d = 1; d < n; d++) v = (v as Value[])[0];
  assert.deepEqual(v, []);
  assert.ok(parseJsonValue(nested('{"a":', "}", n, "1")));
  assert.ok(parseJsonValue(nested('[{"a":', "}]", n / 2, "1")));
  for (const depth of [n + 1, 100_000]) {
    assert.equal(parseJsonValue(nested("[", "]", depth)), null);
    assert.equal(parseJsonValue(nested('{"a":', "}", depth, "1")), null);
    assert.equal(parseJsonValue(nested("[", "]", depth - 1, "{}")), null);
  }
});

Deno.test("numbers a double cannot hold make the text not JSON", () => {
  assert.equal(parseJsonValue("1e400"), null);
  assert.equal(parseJsonValue("[-1e309]"), null);
});

Deno.test("objects become records in source order, even with index-like names", () => {
  assert.deepEqual(shape(parse('{"b":1,"2":true,"a":null,"1":"x","__proto__":[]}')), {
    record: [["b", 1], ["2", true], ["a", null], ["1", "x"], ["__proto__", []]],
  });
  assert.deepEqual(shape(parse('{"a":1,"a":2}')), { record: [["a", 2]] });
});

Deno.test("an array of objects becomes a table with the union of columns, missing cells null", () => {
  assert.deepEqual(shape(parse('[{"name":"a","size":1},{"name":"b"}]')), {
    table: [["name", ["a", "b"]], ["size", [1, null]]],
    n: 2,
  });
  assert.deepEqual(shape(parse('[{"x":1},{"y":2,"x":3},{}]')), {
    table: [["x", [1, 3, null]], ["y", [null, 2, null]]],
    n: 3,
  });
  assert.deepEqual(shape(parse("[{}]")), { table: [], n: 1 });
  assert.deepEqual(shape(parse('[{"a":{"b":[{"c":1.0}]}}]')), {
    table: [["a", [{ record: [["b", { table: [["c", [{ float: 1 }]]], n: 1 }]] }]]],
    n: 1,
  });
});

Deno.test("other arrays are lists; records in them keep their own members and order", () => {
  assert.deepEqual(shape(parse("[]")), []);
  assert.deepEqual(shape(parse('[{"b":1,"a":2},{"a":3},5]')), [
    { record: [["b", 1], ["a", 2]] },
    { record: [["a", 3]] },
    5,
  ]);
  assert.deepEqual(shape(parse('[1,{"a":1}]')), [1, { record: [["a", 1]] }]);
  assert.deepEqual(shape(parse('[[{"a":1},[{"b":2}],{"c":3}],{"d":4}]')), [
    [{ record: [["a", 1]] }, { table: [["b", [2]]], n: 1 }, { record: [["c", 3]] }],
    { record: [["d", 4]] },
  ]);
});

Deno.test("strings decode every escape", () => {
  assert.equal(parse(String.raw`"a\"b\\c\/d\b\f\n\r\t\u00e9\ud834\udd1e"`), 'a"b\\c/d\b\f\n\r\té𝄞');
  assert.equal(parse('"plain é"'), "plain é");
});

Deno.test("anything but exactly one JSON text is rejected", () => {
  for (
    const bad of [
      "",
      "   ",
      "[1,]",
      '{"a":1,}',
      "01",
      "1.",
      ".5",
      "-",
      "1e",
      "+1",
      "NaN",
      "'a'",
      '"a\u0001"',
      '"\\x41"',
      '"\\u12"',
      "1 2",
      "[1] [2]",
      "{a:1}",
      "tru",
      "nul",
      '{"a" 1}',
      "[1 2]",
      '"unterminated',
      "[",
      "{",
      "\ufeff1",
    ]
  ) {
    assert.equal(parseJsonValue(bad), null, JSON.stringify(bad));
  }
  assert.deepEqual(parse(" \t\r\n[true,false,null] \n"), [true, false, null]);
});

Deno.test("agrees with JSON.parse on random documents", () => {
  let seed = 11;
  const random = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
  const pick = <T>(xs: T[]) => xs[Math.floor(random() * xs.length)];
  const gen = (depth: number): unknown => {
    const kind = depth > 3 ? Math.floor(random() * 4) : Math.floor(random() * 7);
    switch (kind) {
      case 0:
        return pick([null, true, false]);
      case 1:
        return pick([0, -1, 17, 2.5, -1e-7, 1e21, 12345678901234]);
      case 2:
        return pick(["", "a", 'é\n"\\', "\u0000\u001f", "𝄞", "0"]);
      case 3:
        return pick(["x", "y"]) + Math.floor(random() * 3);
      case 4:
        return Array.from({ length: Math.floor(random() * 4) }, () => gen(depth + 1));
      case 5:
        return Array.from(
          { length: 1 + Math.floor(random() * 3) },
          () =>
            Object.fromEntries(
              Array.from(
                { length: Math.floor(random() * 3) },
                () => [pick(["a", "b", "c"]), gen(depth + 1)],
              ),
            ),
        );
      default:
        return Object.fromEntries(
          Array.from(
            { length: Math.floor(random() * 4) },
            () => [pick(["k", "l", "m", "n"]), gen(depth + 1)],
          ),
        );
    }
  };
  for (let n = 0; n < 500; n++) {
    const doc = gen(0);
    const text = JSON.stringify(doc, null, n % 2 ? 1 : undefined);
    const expected = JSON.parse(text, (_k, v) => (v === null ? undefined : v));
    assert.deepEqual(
      JSON.parse(JSON.stringify(plain(parse(text))), (_k, v) => (v === null ? undefined : v)),
      expected,
      text,
    );
  }
});

Deno.test("K-BASH-10/K-BASH-11: JSON of more than VALUE_NODE_LIMIT nodes is not a structured value; at the limit it is (probe17: a 16 MB [{},{},…] held 1 GiB)", () => {
  const over = "[1" + ",{}".repeat(VALUE_NODE_LIMIT) + "]";
  // (booleans compared: a failure must not print a value of a quarter million nodes)
  assert.equal(parseJsonValue(over) === null, true);
  // At the limit, with no scalar (each weighs in, K-BASH-11): a list, a list in it, its records.
  const at = "[[]" + ",{}".repeat(VALUE_NODE_LIMIT - 2) + "]";
  assert.equal((parseJsonValue(at)!.value as unknown[]).length, VALUE_NODE_LIMIT - 1);
  assert.equal(parseJsonValue("[1" + ",{}".repeat(VALUE_NODE_LIMIT - 1) + "]") === null, true);
  // A table's rows and cells are not nodes: far more rows than the limit stay a table.
  const rows = "[" + Array(VALUE_NODE_LIMIT + 10).fill('{"a":1}').join(",") + "]";
  assert.ok(parseJsonValue(rows)!.value instanceof Table);
  // Members and columns are: one object or one row with more keys than the limit is text.
  const keys = Array.from({ length: VALUE_NODE_LIMIT }, (_, i) => `"k${i}":1`).join(",");
  assert.equal(parseJsonValue(`{${keys}}`) === null, true, "one object");
  assert.equal(parseJsonValue(`[{${keys}}]`) === null, true, "one row");
});

Deno.test('K-BASH-10: an array of objects whose table would pass TABLE_CELL_LIMIT cells is a list of its records (a 119 KB [{"k0":1},{"k1":1},…] filled 100 million cells)', () => {
  const side = Math.ceil(Math.sqrt(TABLE_CELL_LIMIT)) + 1;
  const text = "[" + Array.from({ length: side }, (_, i) => `{"k${i}":${i}}`).join(",") + "]";
  const list = parseJsonValue(text)!.value as Map<string, Value>[];
  assert.equal(Array.isArray(list), true);
  assert.equal(list.length, side);
  assert.deepEqual([...list[side - 1]], [[`k${side - 1}`, side - 1]]);
  // Just inside the limit it is still a table.
  const inside = Math.floor(Math.sqrt(TABLE_CELL_LIMIT));
  const table = "[" + Array.from({ length: inside }, (_, i) => `{"k${i}":1}`).join(",") + "]";
  assert.equal((parseJsonValue(table)!.value as Table).cols.length, inside);
});
