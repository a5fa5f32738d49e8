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

Deno.test("M-TOOL-3, V-SLICE-1, V-ELIDE-5: a model paging a long output with shoal_get learns what slice counts (a string's characters, though the render's marker counts lines; a list's items; a table's rows) and that a string slice too large for elide.max_bytes arrives as a 256-character preview, not as more text", () => {
  const get = describe("shoal_get");
  assert.match(get, /characters of a string/);
  assert.match(get, /items of a list/);
  assert.match(get, /rows of a table/);
  assert.match(get, /256-character preview/);
  assert.match(get, /narrower slice/);
});

Deno.test("M-TOOL-3, M-PROG-1: a model handed a task (background:true, or a timeout_ms that ran out) learns from shoal_exec where its live output is and that shoal_get of the task's id gives its result", () => {
  const exec = describe("shoal_exec");
  assert.match(exec, /shoal:\/\/task\/N\/out\?stream=stdout/);
  assert.match(exec, /shoal_get \{ref:"task:N"\} gives a task's result once it ended/);
  assert.match(exec, /shoal_cancel/);
  assert.match(describe("shoal_get"), /a task's result \(task:N; its state while it runs\)/);
});
