// Issue 33: idle work (giving memory back) runs once per burst of activity, once the process is idle.
import assert from "node:assert/strict";
import { noteActivity, startIdleWork } from "../../src/protocol/idle_work.ts";
import { delay, waitUntil } from "../_support/wait.ts";

const PERIOD_MS = 20;

Deno.test("idle work follows each burst of requests once the process is idle, and none while it stays idle", async () => {
  let runs = 0;
  const stop = startIdleWork(() => runs++, PERIOD_MS);
  try {
    await delay(5 * PERIOD_MS);
    assert.equal(runs, 0, "no request yet: nothing to give back");
    for (let burst = 1; burst <= 2; burst++) {
      for (let i = 0; i < 5; i++) noteActivity();
      assert.ok(await waitUntil(() => runs === burst, 100 * PERIOD_MS), `burst ${burst}`);
      await delay(5 * PERIOD_MS);
      assert.equal(runs, burst, "one run per burst");
    }
  } finally {
    stop();
  }
});
