// Issue 33: a subscription's events count as the facade's activity, so its idle work (a heap
// compaction of 20-100 ms) waits for a stream of events to pause instead of stalling it.
import assert from "node:assert/strict";
import { noteActivity, startIdleWork } from "../../src/protocol/idle_work.ts";
import { KernelClient } from "../../src/mcp/kernel_client.ts";
import { SubscriptionRegistry } from "../../src/mcp/subscriptions.ts";
import { startKernel } from "../_support/kernel.ts";
import { delay, waitUntil } from "../_support/wait.ts";

const PERIOD_MS = 300;

Deno.test("issue 33: idle work waits while a subscription forwards events, and runs once they stop", async () => {
  const k = await startKernel();
  const kernel = new KernelClient({
    session: "default",
    socketSession: "default",
    token: null,
    socket: k.socket,
    socketProblem: null,
    socketRoot: k.box.socketRoot,
    socketEnv: null,
    project: null,
    autostart: false,
    kernel: "shoal-kernel",
    searchPath: null,
  }, () => {});
  let forwarded = 0;
  const registry = new SubscriptionRegistry(kernel, () => {
    forwarded++;
    return undefined;
  }, () => {});
  let runs = 0;
  const stop = startIdleWork(() => runs++, PERIOD_MS);
  const publisher = await k.attach("default");
  try {
    await registry.subscribe("shoal://events/user.stream");
    noteActivity(); // the client's subscribe request, as the stdio transport counts it
    // Events for five periods, one every 10 ms: the facade is never idle for a whole period.
    const started = performance.now();
    for (let i = 0; performance.now() - started < 5 * PERIOD_MS; i++) {
      await publisher.request("events.publish", { channel: "user.stream", payload: { i } });
      await delay(10);
    }
    assert.ok(forwarded > 0, "events reached the subscription");
    assert.equal(runs, 0, "no idle work while events were forwarded");
    assert.ok(await waitUntil(() => runs === 1, 20 * PERIOD_MS), "idle work once they stopped");
  } finally {
    stop();
    publisher.close();
    registry.closeAll();
    kernel.close();
    await k.cleanup();
  }
});
