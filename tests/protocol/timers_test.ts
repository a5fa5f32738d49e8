// Issue 33: timers on Deno's own queue (protocol/timers.ts), which the facade uses instead of
// the global setTimeout (it loads the Node layer).
import assert from "node:assert/strict";
import { after, sleep } from "../../src/protocol/timers.ts";

Deno.test("after calls its function once, in the order of the delays; sleep resolves after them", async () => {
  const calls: string[] = [];
  after(20, () => calls.push("late"));
  after(0, () => calls.push("soon"));
  assert.deepEqual(calls, [], "not before the delay");
  await sleep(40);
  assert.deepEqual(calls, ["soon", "late"]);
  await sleep(40);
  assert.deepEqual(calls, ["soon", "late"], "once");
});

Deno.test("a cancelled timer never calls its function, and cancelling again or after it ran is harmless", async () => {
  let calls = 0;
  const cancel = after(10, () => calls++);
  cancel();
  const ran = after(0, () => calls += 10);
  await sleep(30);
  cancel();
  ran();
  assert.equal(calls, 10);
});
