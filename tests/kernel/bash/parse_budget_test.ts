import assert from "node:assert/strict";
import { passesParseBudget } from "../../../src/kernel/bash/parse_budget.ts";

Deno.test("the parse budget counts words and each operator, expansion and line end", () => {
  // echo | a | b | ; | $ | ( | x | ) | \n | cat | < | f  = 12 units
  const src = "echo  a\tb; $(x)\ncat <f";
  assert.equal(passesParseBudget(src, 12), -1);
  assert.equal(passesParseBudget(src, 11), src.length - 1);
  assert.equal(passesParseBudget(":\n".repeat(10), 20), -1);
  assert.equal(passesParseBudget(":\n".repeat(10), 19), 19);
  assert.equal(passesParseBudget("# " + "x".repeat(100_000), 2), -1);
  assert.equal(passesParseBudget("", 0), -1);
});
