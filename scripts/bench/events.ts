// Benchmark: event notification latency, publish → subscriber, on one real kernel, by stage.
//  1. Kernel socket: 10 subscriber connections (`events.subscribe`) receive 1000 `user.*` events.
//  2. Facade stdout: 10 shoal-mcp facades subscribe to `shoal://events/user.bench`; this process
//     reads their stdout itself, so the figure ends where the facade's work ends.
//  3. MCP clients: the same through 10 MCP SDK clients (adds the client's parsing/validation).
// Latency = arrival − the moment the `events.publish` request was sent (one clock: this
// process). CPU per event is read from /proc for the kernel, each facade and this process
// (the subscribers' side). Afterwards the subscribers unsubscribe and the kernel's connections
// on its socket are counted (lsof) to show that unsubscribing leaves none behind.
// Run: deno run -A scripts/bench/events.ts
// @ts-types="@modelcontextprotocol/sdk/client/index"
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { RpcConnection } from "../../src/protocol/rpc_client.ts";
import { connectMcp, type Mcp } from "../../tests/e2e/_mcp.ts";
import { startKernel, type TestKernel } from "../../tests/_support/kernel.ts";
import {
  allPids,
  cpuMs,
  kernelConnections,
  kernelPid,
  parentPid,
} from "../../tests/_support/proc.ts";
import { sandbox } from "../../tests/_support/sandbox.ts";
import { waitUntil } from "../../tests/_support/wait.ts";
import { spawnFacade } from "../../tests/_support/facade.ts";

const SUBSCRIBERS = 10;
const EVENTS = 1000;
const CHANNEL = "user.bench";

/** One way of subscribing: returns an unsubscribe-and-close function. */
type Subscribe = (onEvent: (payload: { i?: number; dropped?: number }) => void) => Promise<
  { unsubscribe(): Promise<void>; close(): Promise<void> }
>;

function percentile(sorted: number[], p: number): number {
  return sorted[Math.max(0, Math.ceil(p * sorted.length) - 1)];
}

/** Facade processes: grandchildren of this process (launcher → facade), the kernel aside. */
function facadePids(kernel: number): number[] {
  return allPids().filter((p) => {
    try {
      return p !== kernel && parentPid(parentPid(p)) === Deno.pid;
    } catch {
      return false;
    }
  });
}

interface Figures {
  p50: number;
  p95: number;
}

async function measure(label: string, k: TestKernel, subscribe: Subscribe): Promise<Figures> {
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
  const facades = facadePids(pid);
  const cpuBefore = [pid, Deno.pid, ...facades].map(cpuMs);
  const started = performance.now();
  for (let i = 0; i < EVENTS; i++) {
    sentAt[i] = performance.now();
    await publisher.request("events.publish", { channel: CHANNEL, payload: { i } });
  }
  await waitUntil(() => latencies.length + dropped >= SUBSCRIBERS * EVENTS, 20000);
  const elapsed = performance.now() - started;
  const [kernelCpu, selfCpu, ...facadeCpu] = [pid, Deno.pid, ...facades].map((p, i) =>
    cpuMs(p) - cpuBefore[i]
  );
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
      `p50 ${percentile(sorted, 0.5).toFixed(3)} ms, p95 ${
        percentile(sorted, 0.95).toFixed(3)
      } ms, ` +
      `max ${percentile(sorted, 1).toFixed(3)} ms`,
  );
  const perEvent = (ms: number) => `${(ms * 1000 / EVENTS).toFixed(0)} µs`;
  const facadeAverage = facadeCpu.reduce((a, b) => a + b, 0) / Math.max(1, facadeCpu.length);
  console.log(
    `${label}: CPU per published event: kernel ${perEvent(kernelCpu)}, ` +
      (facades.length > 0 ? `each facade ${perEvent(facadeAverage)}, ` : "") +
      `subscribers (this process) ${perEvent(selfCpu)}`,
  );
  console.log(
    `${label}: kernel connections ${baseline} before, ${subscribed} subscribed, ` +
      `${unsubscribed} after unsubscribe, ${closed} after the subscribers closed ` +
      `(${closed - baseline} left behind)`,
  );
  return { p50: percentile(sorted, 0.5), p95: percentile(sorted, 0.95) };
}

function ratios(label: string, mcp: Figures, kernel: Figures): void {
  console.log(
    `${label} / kernel socket: p50 ${(mcp.p50 / kernel.p50).toFixed(1)}x (target <= 3x), ` +
      `p95 ${(mcp.p95 / kernel.p95).toFixed(1)}x (target <= 5x)`,
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

/** Subscribers that read a facade's stdout frames themselves: the facade without an SDK client. */
const stdoutSubscribe =
  (box: Awaited<ReturnType<typeof sandbox>>, children: Deno.ChildProcess[]): Subscribe =>
  async (onEvent) => {
    const child = spawnFacade(box);
    children.push(child);
    const stdin = child.stdin.getWriter();
    const uri = `shoal://events/${CHANNEL}`;
    const replies = new Map<number, () => void>();
    const request = async (id: number, method: string) => {
      const answered = new Promise<void>((resolve) => replies.set(id, resolve));
      const frame = JSON.stringify({ jsonrpc: "2.0", id, method, params: { uri } }) + "\n";
      await stdin.write(new TextEncoder().encode(frame));
      await answered;
    };
    (async () => {
      const decoder = new TextDecoder();
      let pending = "";
      for await (const chunk of child.stdout) {
        pending += decoder.decode(chunk, { stream: true });
        const lines = pending.split("\n");
        pending = lines.pop()!;
        for (const line of lines) {
          const frame = JSON.parse(line);
          if (frame.method === "notifications/resources/updated") onEvent(frame.params.payload);
          else replies.get(frame.id)?.();
        }
      }
    })();
    await request(1, "resources/subscribe");
    return {
      unsubscribe: () => request(2, "resources/unsubscribe"),
      close: async () => {
        await stdin.close().catch(() => {});
        await child.status;
      },
    };
  };

const box = await sandbox();
const mcps: Mcp[] = [];
const children: Deno.ChildProcess[] = [];
try {
  const k = await startKernel([], box);
  const kernel = await measure("kernel socket", k, kernelSubscribe(k));
  const stdout = await measure("facade stdout", k, stdoutSubscribe(box, children));
  const clients = await measure("MCP clients", k, mcpSubscribe(mcps, box));
  ratios("facade stdout", stdout, kernel);
  ratios("MCP clients", clients, kernel);
  await k.stop();
} finally {
  for (const mcp of mcps) await mcp.close().catch(() => {});
  for (const child of children) {
    try {
      child.kill("SIGKILL");
    } catch {
      // already exited
    }
  }
  await box.cleanup();
}
