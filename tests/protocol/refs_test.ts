import assert from "node:assert/strict";
import { canonicalNumber, refNumber, refToUri } from "../../src/protocol/refs.ts";

Deno.test("V-REF-1/3 numbered refs are accepted in canonical form only", () => {
  assert.equal(refNumber("out", "out:1"), 1);
  assert.equal(refNumber("task", "task:907"), 907);
  assert.equal(refNumber("pty", "pty:3"), 3);
  for (
    const bad of ["out:01", "out:0", "out:", "out:+1", "out:1.0", "out:1e2", "out: 1", "task:1"]
  ) {
    assert.equal(refNumber("out", bad), null, bad);
  }
  assert.equal(canonicalNumber("9007199254740991"), Number.MAX_SAFE_INTEGER);
  assert.equal(canonicalNumber("9007199254740993"), null);
  assert.equal(refToUri("out:12"), "shoal://out/12");
});
