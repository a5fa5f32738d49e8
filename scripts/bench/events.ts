// Benchmark: event notification latency, publish → subscriber, on one real kernel.
//  1. Kernel socket: 10 subscriber connections (`events.subscribe`) receive 1000 `user.*` events.
//  2. MCP: 10 MCP clients, each with its own shoal-mcp facade, subscribe to
//     `shoal://events/user.bench` and receive the same 1000 events as
//     `notifications/resources/updated`.
// Latency = arrival − the moment the `events.publish` request was sent (one clock: this
// process). Afterwards the subscribers unsubscribe and the kernel's connections on its socket
// are counted (/proc) to show that unsubscribing leaves none behind.
// Run: deno run -A scripts/bench/events.ts
// @ts-types="@modelcontextprotocol/sdk/client/index"
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { RpcConnection } from "../../src/protocol/rpc_client.ts";
import { connectMcp, type Mcp } from "../../tests/e2e/_mcp.ts";
import { startKernel, type TestKernel } from "../../tests/_support/kernel.ts";
import { kernelConnections, kernelPid } from "../../tests/_support/proc.ts";
import { sandbox } from "../../tests/_support/sandbox.ts";
import { waitUntil } from "../../tests/_support/wait.ts";

const SUBSCRIBERS = 10;
const EVENTS = 1000;
const CHANNEL = "user.bench";

/** One way of subscribing: returns an unsubscribe-and-close function. */
type Subscribe = (onEvent: (payload: { i?: number; dropped?: number }) => void) => Promise<
  { unsubscribe(): Promise<void>; close(): Promise<void> }
>;

function percentile(sorted: number[], p: number): string {
  return sorted[Math.max(0, Math.ceil(p * sorted.length) - 1)].toFixed(3);
}

async function measure(label: string, k: TestKernel, subscribe: Subscribe): Promise<void> {
  const pid = kernelPid(k.socket);
  const publisher = await k.attach("default");
  const baseline = kernelConnections(pid, k.socket);
  const sentAt: number[] = new Array(EVENTS);
  const latencies: number[] = [];
  let dropped = 0;
  const subs = [];
  for (let s = 0; s < SUBSCRIBERS; s++) {
    subs.push(
      await subscribe((payload) => {
        if (payload.dropped !== undefined) dropped += payload.dropped;
        else if (payload.i !== undefined) latencies.push(performance.now() - sentAt[payload.i]);
      }),
    );
  }
  const subscribed = kernelConnections(pid, k.socket);
  const started = performance.now();
  for (let i = 0; i < EVENTS; i++) {
    sentAt[i] = performance.now();
    await publisher.request("events.publish", { channel: CHANNEL, payload: { i } });
  }
  await waitUntil(() => latencies.length + dropped >= SUBSCRIBERS * EVENTS, 20000);
  const elapsed = performance.now() - started;
  for (const sub of subs) await sub.unsubscribe();
  await waitUntil(() => kernelConnections(pid, k.socket) <= subscribed - SUBSCRIBERS, 5000);
  const unsubscribed = kernelConnections(pid, k.socket);
  for (const sub of subs) await sub.close();
  await waitUntil(() => kernelConnections(pid, k.socket) <= baseline, 5000);
  const closed = kernelConnections(pid, k.socket);
  publisher.close();
  const sorted = [...latencies].sort((a, b) => a - b);
  console.log(
    `${label}: ${SUBSCRIBERS} subscribers x ${EVENTS} events in ${elapsed.toFixed(0)} ms: ` +
      `delivered ${sorted.length}, dropped ${dropped}; publish->notification ` +
      `p50 ${percentile(sorted, 0.5)} ms, p95 ${percentile(sorted, 0.95)} ms, ` +
      `max ${percentile(sorted, 1)} ms`,
  );
  console.log(
    `${label}: kernel connections ${baseline} before, ${subscribed} subscribed, ` +
      `${unsubscribed} after unsubscribe, ${closed} after the subscribers closed ` +
      `(${closed - baseline} left behind)`,
  );
}

/** Subscribers that are plain kernel connections. */
const kernelSubscribe = (k: TestKernel): Subscribe => async (onEvent) => {
  const conn: RpcConnection = await k.attach("default");
  conn.onNotification = (method, params) => {
    if (method === "event") onEvent(params.payload as { i?: number });
  };
  await conn.request("events.subscribe", { channel: CHANNEL });
  return {
    unsubscribe: async () => {
      await conn.request("events.unsubscribe", { channel: CHANNEL });
      // A raw connection stays open after unsubscribing; close it so the count shows the drop.
      conn.close();
    },
    close: () => Promise.resolve(),
  };
};

/** Subscribers that are MCP clients, each with its own facade. */
const mcpSubscribe =
  (mcps: Mcp[], box: Awaited<ReturnType<typeof sandbox>>): Subscribe => async (onEvent) => {
    const mcp = await connectMcp(box);
    mcps.push(mcp);
    const client: Client = mcp.client;
    const uri = `shoal://events/${CHANNEL}`;
    client.fallbackNotificationHandler = (n) => {
      const params = n.params as { uri?: string; payload?: { i?: number } };
      if (n.method === "notifications/resources/updated" && params.uri === uri) {
        onEvent(params.payload ?? {});
      }
      return Promise.resolve();
    };
    await client.subscribeResource({ uri });
    return {
      unsubscribe: async () => {
        await client.unsubscribeResource({ uri });
      },
      close: () => mcp.close(),
    };
  };

const box = await sandbox();
const mcps: Mcp[] = [];
try {
  const k = await startKernel([], box);
  await measure("kernel socket", k, kernelSubscribe(k));
  await measure("MCP clients", k, mcpSubscribe(mcps, box));
  await k.stop();
} finally {
  for (const mcp of mcps) await mcp.close().catch(() => {});
  await box.cleanup();
}
