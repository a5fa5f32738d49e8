// Issue 10: a repeated short source reuses its parse; its effects still follow the session state.
import assert from "node:assert/strict";
import { parseBash } from "../../../src/kernel/bash/ast.ts";
import { analyzeOffLoop } from "../../../src/kernel/policy/off_loop.ts";
import type { EffectState } from "../../../src/kernel/policy/effects.ts";

function state(env: Record<string, string>): EffectState {
  return {
    cwd: "/tmp",
    env,
    changedEnv: new Set(Object.keys(env)),
    home: "/home/u",
    sessionCommands: new Set(),
  };
}

Deno.test("a repeated source is parsed once, frozen, and judged from the state of each call", async () => {
  const src = 'cat "$F" > /tmp/out-$$';
  const first = await analyzeOffLoop(src, state({ F: "/etc/hostname", PATH: "/usr/bin" }), true);
  const again = await analyzeOffLoop(src, state({ F: "/etc/passwd", PATH: "/usr/bin" }), true);
  assert.equal(again.ast, first.ast);
  assert.ok(Object.isFrozen(first.ast));
  assert.deepEqual(
    JSON.parse(JSON.stringify(first.ast)),
    JSON.parse(JSON.stringify(parseBash(src))),
  );
  const reads = (r: typeof first) =>
    JSON.stringify(r.analysis!.effects.filter((e) => e.kind === "fs_read"));
  assert.match(reads(first), /hostname/);
  assert.match(reads(again), /passwd/);
});

Deno.test("a syntax error is reported again on every parse of the same source", async () => {
  for (let i = 0; i < 2; i++) {
    await assert.rejects(analyzeOffLoop("if then (", null, false), { code: -32001 });
  }
});
