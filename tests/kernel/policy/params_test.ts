import assert from "node:assert/strict";
import { CompleteParams, ExplainParams, ParseParams } from "../../../src/kernel/policy/params.ts";

Deno.test("K-PARSE-1, K-EXPL-1: src is a required string; unknown members are ignored", () => {
  assert.deepEqual(ParseParams.parse({ src: "ls", extra: 1 }), { src: "ls" });
  assert.deepEqual(ExplainParams.parse({ src: "ls" }), { src: "ls" });
  assert.equal(ParseParams.safeParse({}).success, false);
  assert.equal(ExplainParams.safeParse({ ast: { type: "File", stmts: [] } }).success, false);
  assert.equal(ParseParams.safeParse({ src: 5 }).success, false);
});

Deno.test("K-COMP-1: cursor is an optional integer (clamping is the handler's job)", () => {
  assert.deepEqual(CompleteParams.parse({ src: "gi", cursor: 2 }), { src: "gi", cursor: 2 });
  assert.deepEqual(CompleteParams.parse({ src: "gi" }), { src: "gi" });
  assert.deepEqual(CompleteParams.parse({ src: "gi", cursor: -3 }), { src: "gi", cursor: -3 });
  assert.equal(CompleteParams.safeParse({ src: "gi", cursor: 1.5 }).success, false);
  assert.equal(CompleteParams.safeParse({ src: "gi", cursor: "2" }).success, false);
});
