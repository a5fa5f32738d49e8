// Issue 33: an idle kernel gives its C heap's free pages back, once per burst of requests.
import assert from "node:assert/strict";
import { mallocTrim, noteRequest, startIdleTrim } from "../../../src/kernel/daemon/idle_trim.ts";
import { needsLinux } from "../../_support/host.ts";
import { delay, waitUntil } from "../../_support/wait.ts";

const PERIOD_MS = 20;

Deno.test("a trim follows each burst of requests once the kernel is idle, and none while it stays idle", async () => {
  let trims = 0;
  const stop = startIdleTrim(() => trims++, PERIOD_MS);
  try {
    await delay(5 * PERIOD_MS);
    assert.equal(trims, 0, "no request yet: nothing to give back");
    for (let burst = 1; burst <= 2; burst++) {
      for (let i = 0; i < 5; i++) noteRequest();
      assert.ok(await waitUntil(() => trims === burst, 100 * PERIOD_MS), `burst ${burst}`);
      await delay(5 * PERIOD_MS);
      assert.equal(trims, burst, "one trim per burst");
    }
  } finally {
    stop();
  }
});

Deno.test({
  name: "malloc_trim is found and runs where the kernel runs on glibc",
  ignore: needsLinux("glibc's malloc_trim") !== null,
  fn: () => {
    const trim = mallocTrim();
    assert.ok(trim !== null);
    trim();
  },
});
