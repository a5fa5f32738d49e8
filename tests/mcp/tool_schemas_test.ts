import assert from "node:assert/strict";
import { Ajv2020 } from "ajv/dist/2020.js";
// @ts-types="@modelcontextprotocol/sdk/types"
import { ToolSchema } from "@modelcontextprotocol/sdk/types.js";
import { approvalRequest } from "../../src/mcp/client_approval.ts";
import { TOOLS, toolsFor } from "../../src/mcp/tool_schemas.ts";
import type { Rec } from "../_support/rec.ts";

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

Deno.test("M-META-1: every tool input schema, and the approval form's schema, is valid JSON Schema 2020-12 (checked by Ajv's 2020-12 meta-schema, strict mode)", () => {
  const ajv = new Ajv2020({ strict: true });
  const schemas: [string, unknown][] = [
    ...toolsFor(true).map((t): [string, unknown] => [t.name, t.inputSchema]),
    [
      "approval form",
      approvalRequest({ src: "x", effects: [], plan_ref: "plan:0" }).requestedSchema,
    ],
  ];
  for (const [name, schema] of schemas) {
    assert.equal(ajv.validateSchema(schema as object), true, `${name}: ${ajv.errorsText()}`);
    ajv.compile(schema as object); // strict mode throws on unknown keywords and loose forms
  }
  assert.equal(
    ajv.validateSchema({ type: "object", properties: { a: { type: "strnig" } } }),
    false,
  );
});

Deno.test("M-TOOL-4, M-TASKS-1: every tool has a title; only shoal_exec offers task execution, and only when tasks were negotiated", () => {
  for (const t of toolsFor(false)) {
    assert.ok(t.title.length > 0, t.name);
    assert.equal("execution" in t, false);
  }
  assert.deepEqual(toolsFor(false), TOOLS);
  const withTasks = toolsFor(true);
  assert.deepEqual(
    withTasks.filter((t) => "execution" in t).map((t) => [t.name, (t as unknown as Rec).execution]),
    [["shoal_exec", { taskSupport: "optional" }]],
  );
  for (const t of withTasks) ToolSchema.parse(t);
});
