import assert from "node:assert/strict";
import { jsonContainers } from "../../../src/kernel/values/json_containers.ts";
import { parseJsonValue } from "../../../src/kernel/values/json_value.ts";
import { VALUE_CONTAINER_LIMIT } from "../../../src/protocol/limits.ts";

Deno.test("jsonContainers counts the arrays and objects a parse builds, a table's rows aside", () => {
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
  for (const [text, n] of cases) assert.equal(jsonContainers(text), n, text);
});

Deno.test("K-BASH-10/K-BASH-11: JSON holding more than VALUE_CONTAINER_LIMIT containers is not a structured value; at the limit it is", () => {
  const over = "[1" + ",{}".repeat(VALUE_CONTAINER_LIMIT) + "]";
  assert.equal(parseJsonValue(over), null);
  const at = "[1" + ",{}".repeat(VALUE_CONTAINER_LIMIT - 1) + "]";
  assert.equal((parseJsonValue(at)!.value as unknown[]).length, VALUE_CONTAINER_LIMIT);
  // A table's rows do not count: far more rows than the limit stay a table.
  const rows = "[" + Array(VALUE_CONTAINER_LIMIT + 10).fill('{"a":1}').join(",") + "]";
  assert.notEqual(parseJsonValue(rows), null);
});
