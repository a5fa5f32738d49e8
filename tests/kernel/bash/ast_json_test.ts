import assert from "node:assert/strict";
import { parseBash } from "../../../src/kernel/bash/ast.ts";
import { boundedAstJson } from "../../../src/kernel/bash/ast_json.ts";

const SOURCES = [
  "",
  "# only a comment\n",
  "echo a > out.txt; cat out.txt | wc -l && echo 'é' \"$HOME\"\n",
  "if true; then f() { echo x; }; fi\nfor i in 1 2; do :; done &\n",
];

Deno.test("the bounded AST JSON is JSON.stringify's text when it fits", () => {
  for (const src of SOURCES) {
    const ast = parseBash(src);
    const json = JSON.stringify(ast);
    assert.equal(boundedAstJson(ast, json.length), json);
    assert.equal(boundedAstJson(ast, Number.MAX_SAFE_INTEGER), json);
  }
});

Deno.test("the bounded AST JSON is null when one code unit more than the limit would be needed", () => {
  for (const src of SOURCES) {
    const ast = parseBash(src);
    assert.equal(boundedAstJson(ast, JSON.stringify(ast).length - 1), null);
  }
  const many = parseBash(":\n".repeat(1000));
  assert.equal(boundedAstJson(many, 1000), null);
});

Deno.test("the bounded AST JSON of one statement is exact at its limit and null one code unit below", () => {
  const one = parseBash("a=(" + "x ".repeat(1000) + ') b=$(c "d\\"") # é\n');
  const json = JSON.stringify(one);
  assert.equal(boundedAstJson(one, json.length), json);
  assert.equal(boundedAstJson(one, json.length - 1), null);
  assert.equal(boundedAstJson(one, 1000), null);
});
