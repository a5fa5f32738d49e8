import assert from "node:assert/strict";
import { SCALAR_BYTES, STRING_BYTES } from "../../../src/protocol/limits.ts";
import { jsonShape } from "../../../src/kernel/values/json_shape.ts";

Deno.test("jsonShape counts the arrays and objects a parse builds, a table's rows aside", () => {
  const cases: [string, number][] = [
    ["1", 0],
    ['"[{"', 0],
    ["{}", 1],
    ["[]", 1],
    ["[{},{}]", 1], // a table
    ["[{}, 1]", 2], // a list and its record
    ['[{"a":{}}, {"b":[]}]', 3], // a table, a record and a list in its rows
    ['{"a":[{"b":[]}]}', 3],
    ["[[1],[2]]", 3],
    [' [ "]", "\\"{", {"x":"[\\\\"} ] ', 2], // brackets in strings do not count
    ["[1, [], {}]", 3],
  ];
  for (const [text, n] of cases) assert.equal(jsonShape(text).containers, n, text);
});

Deno.test("jsonShape weighs the scalar values a parse holds, strings by their characters, member names aside (K-BASH-11)", () => {
  const cases: [string, number][] = [
    ["1", SCALAR_BYTES],
    ['"abc"', STRING_BYTES + 3],
    ["[]", 0],
    ["[1, true, null, -2.5e3]", 4 * SCALAR_BYTES],
    ['{"name":"ab","n":1}', STRING_BYTES + 2 + SCALAR_BYTES],
    ['[{"a":"x\\"y"},{"b":[1]}]', STRING_BYTES + 4 + SCALAR_BYTES],
    ['[ "", {}, [ ] ]', STRING_BYTES],
  ];
  for (const [text, n] of cases) assert.equal(jsonShape(text).scalarBytes, n, text);
});
