/** signalGroup never signals the kernel's own process group, whatever pid it is given. */
import assert from "node:assert/strict";
import { signalGroup } from "../../../src/kernel/bash/group_leader.ts";

Deno.test("signalGroup(0) signals nothing: kill(-0) would reach the caller's own group", () => {
  // SIGWINCH, harmless here: the old code sent it to this test's own group and returned true.
  assert.equal(signalGroup(0, "SIGWINCH"), false);
  assert.equal(signalGroup(-1, "SIGWINCH"), false);
});
