// Issue 33: an idle kernel gives its C heap's free pages back (the idle check: protocol/idle_work).
import assert from "node:assert/strict";
import { mallocTrim } from "../../../src/kernel/daemon/idle_trim.ts";
import { needsLinux } from "../../_support/host.ts";

Deno.test({
  name: "malloc_trim is found and runs where the kernel runs on glibc",
  ignore: needsLinux("glibc's malloc_trim") !== null,
  fn: () => {
    const trim = mallocTrim();
    assert.ok(trim !== null);
    trim();
  },
});
