// The facade's subscription registry on a real kernel. Issue 33: a subscription's events count as
// the facade's activity, so its idle work (a heap compaction of 20-100 ms) waits for a stream of
// events to pause instead of stalling it. M-SUB-2/4: its dedicated connections stay bounded.
import assert from "node:assert/strict";
import { MAX_SUBSCRIPTIONS } from "../../src/protocol/limits.ts";
import { noteActivity, startIdleWork } from "../../src/protocol/idle_work.ts";
import { KernelClient } from "../../src/mcp/kernel_client.ts";
import { SubscriptionRegistry } from "../../src/mcp/subscriptions.ts";
import { startKernel, type TestKernel } from "../_support/kernel.ts";
import { delay, waitUntil } from "../_support/wait.ts";

const PERIOD_MS = 300;

/** A facade's kernel client for `socket` on session `default`, without autostart. */
function kernelClient(k: TestKernel): KernelClient {
  return new KernelClient({
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
}

/** How many sockets this process holds open. */
function openSockets(): number {
  let n = 0;
  for (const fd of Deno.readDirSync("/proc/self/fd")) {
    try {
      if (Deno.readLinkSync(`/proc/self/fd/${fd.name}`).startsWith("socket:")) n++;
    } catch {
      // closed meanwhile
    }
  }
  return n;
}

Deno.test({
  name:
    "M-SUB-2/M-SUB-4 subscribe/unsubscribe pairs sent faster than connections close open at most 64 dedicated connections (each a relay process in the release): an unsubscribed entry's connection still attaching was not counted, so 100 pairs held 100",
  ignore: Deno.build.os !== "linux",
  fn: async () => {
    const k = await startKernel();
    const kernel = kernelClient(k);
    const registry = new SubscriptionRegistry(kernel, () => undefined, () => {});
    let stopped = false;
    try {
      await kernel.connection();
      const before = openSockets();
      // A stopped kernel accepts no connection and answers no attach: each pair's connection
      // stays open until it continues, as a slow kernel or relay keeps it for a while.
      Deno.kill(k.child.pid, "SIGSTOP");
      stopped = true;
      const replies: Promise<unknown>[] = [];
      for (let i = 0; i < 100; i++) {
        const uri = `shoal://events/user.pair${i}`;
        // Caught here: a failure is an answer the assertions below compare, not an unhandled one.
        for (const reply of [registry.subscribe(uri), registry.unsubscribe(uri)]) {
          replies.push(reply.catch((e: Error) => e.message));
        }
      }
      await waitUntil(() => openSockets() - before >= 100, 3000);
      const held = openSockets() - before;
      assert.ok(held <= MAX_SUBSCRIPTIONS, `${held} dedicated connections open at once`);
      Deno.kill(k.child.pid, "SIGCONT");
      stopped = false;
      for (const reply of replies) assert.deepEqual(await reply, {});
      assert.equal(registry.size, 0, "every pair ends unsubscribed");
      assert.ok(await waitUntil(() => openSockets() === before, 10000), "their connections close");
    } finally {
      if (stopped) Deno.kill(k.child.pid, "SIGCONT");
      registry.closeAll();
      kernel.close();
      await k.cleanup();
    }
  },
});

Deno.test("issue 33: idle work waits while a subscription forwards events, and runs once they stop", async () => {
  const k = await startKernel();
  const kernel = kernelClient(k);
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
