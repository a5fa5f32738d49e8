import assert from "node:assert/strict";
import { TOOLS } from "../../src/mcp/tool_schemas.ts";

const describe = (name: string) => TOOLS.find((t) => t.name === name)!.description;

Deno.test("a model that sees only structuredContent learns from the tool descriptions how to get what a result left out (issue 16)", () => {
  for (const name of ["shoal_exec", "shoal_apply", "shoal_get"]) {
    assert.match(describe(name), /shoal_get \{ref, path, slice\}/, name);
    assert.match(describe(name), /shoal:\/\/ uri/, name);
    assert.match(describe(name), /truncated:true/, name);
  }
  assert.match(describe("shoal_plan"), /shoal:\/\/plan\//);
  assert.match(describe("shoal_journal"), /truncated:true/);
});
