import assert from "node:assert/strict";
import { jsonContainers } from "../../../src/kernel/values/json_containers.ts";

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
