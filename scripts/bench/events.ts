// Benchmark: event notification latency, publish → subscriber, on one real kernel, by stage.
//  1. Kernel socket: 10 subscriber connections (`events.subscribe`) receive 1000 `user.*` events.
//  2. Bare forwarder: 10 processes that do the least a facade could (event_forwarder.ts: attach,
//     subscribe, copy each socket read to stdout): the cost of the process hop alone.
//  3. Facade stdout: 10 shoal-mcp facades subscribe to `shoal://events/user.bench`; this process
//     reads their stdout itself, so the figure ends where the facade's work ends.
// Stages 2 and 3 read each stdout pipe into one reused buffer and frame and decode its lines as
// the socket subscribers' connections do, so that the reader costs alike on every way.
//  4. MCP clients: the same through 10 MCP SDK clients (adds the client's parsing/validation).
// Each way is measured twice on the same subscribers: the first 1000 events reach fresh processes
// (their code still runs unoptimized: a facade costs 2-3x more CPU per event then), the next 1000
// reach them warmed up, as the facade of a session that has been running for a while is.
// All ways are set up first, each on its own channel, and take turns by 100 events, so that a
// change in the machine's load (other processes) falls alike on each way's figures. Each event
// is published once the one before has reached every subscriber, whichever way. Latency = arrival − the moment the `events.publish` request was sent (one clock: this
// process). Two arrivals are timed: when the line was read from the pipe or socket (before any
// parsing: "on stdout"), and when the subscriber's handler got it. All subscribers live in this
// one process, so a notification read late because this process was busy with the others' lines
// counts against the figure; the stage lines show how much of it is this process's own work.
// CPU per event is read from /proc for the kernel, each facade and this process (the
// subscribers' side). Afterwards the subscribers unsubscribe and the kernel's connections
// on its socket are counted (lsof) to show that unsubscribing leaves none behind.
// --compare=<checkout>: one more way, "facade stdout (compare)", the facades of another checkout
// (its bin/shoal-mcp, e.g. a `git worktree add --detach /tmp/old main`) on the same kernel, taking
// its turns with the others, so old and new facades are compared in one run.
// Run: deno run -A scripts/bench/events.ts [--compare=<checkout>]
import { parseArgs } from "node:util";
// @ts-types="@modelcontextprotocol/sdk/client/index"
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
// @ts-types="@modelcontextprotocol/sdk/shared/transport"
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { RpcConnection } from "../../src/protocol/rpc_client.ts";
import { connectMcp, type Mcp } from "../../tests/e2e/_mcp.ts";
import { startKernel, type TestKernel } from "../../tests/_support/kernel.ts";
import {
  childrenMentioning,
  cpuMs,
  kernelConnections,
  kernelPid,
} from "../../tests/_support/proc.ts";
import { sandbox } from "../../tests/_support/sandbox.ts";
import { delay, waitUntil } from "../../tests/_support/wait.ts";
import { IDLE_TICK_MS } from "../../src/protocol/idle_work.ts";
import { spawnFacade } from "../../tests/_support/facade.ts";
import { percentile } from "./percentile.ts";
import { readFrames } from "./stdout_frames.ts";

const SUBSCRIBERS = 10;
const EVENTS = 1000;
const CHANNEL = "user.bench";

type Payload = { i?: number; dropped?: number };
/**
 * Called by a subscriber for each event: `arrivedAt` is when its line was read from the pipe or
 * socket (performance.now(), before parsing); the call itself marks when the handler got it.
 */
type OnEvent = (payload: Payload, arrivedAt: number) => void;

/** One way of subscribing to a channel: returns an unsubscribe-and-close function. */
type Subscribe = (channel: string, onEvent: OnEvent) => Promise<
  { unsubscribe(): Promise<void>; close(): Promise<void> }
>;

/** Subscriber processes: children of this process (a launcher execs the facade), the kernel aside. */
function subscriberPids(kernel: number): number[] {
  return childrenMentioning(Deno.pid, "deno").filter((p) => p !== kernel);
}

/** Latency figures of one round (ms), and CPU per notification (µs). */
interface Round {
  arrived: { p50: number; p95: number };
  handled: { p50: number; p95: number };
  cpu: { kernel: number; facade: number | null; self: number };
}

/** A way of subscribing measured on fresh subscriber processes, then once they have warmed up. */
interface Figures {
  cold: Round;
  warm: Round;
}

function quantiles(samples: number[]): { p50: number; p95: number; max: number } {
  const sorted = [...samples].sort((a, b) => a - b);
  return {
    p50: percentile(sorted, 0.5),
    p95: percentile(sorted, 0.95),
    max: percentile(sorted, 1),
  };
}

const ms = (q: { p50: number; p95: number }) =>
  `p50 ${q.p50.toFixed(3)} ms, p95 ${q.p95.toFixed(3)} ms`;
const us = (n: number | null) => n === null ? "?" : `${n.toFixed(0)} µs`;

/** Events a way publishes in one turn: the ways take turns, so the machine's load falls alike on each. */
const BLOCK = 100;

/** One way of subscribing, with its subscribers set up. */
interface Way {
  label: string;
  /** Publishes events `from` .. `from + count - 1` to the way's subscribers. */
  block(from: number, count: number): Promise<void>;
  /** Prints and returns the figures of the events published since the last call. */
  round(name: string): Round;
  /** Unsubscribes and closes the subscribers, printing the kernel's connections. */
  close(): Promise<void>;
}

/** Sets up {@link SUBSCRIBERS} subscribers of `channel` by `subscribe` on kernel `k`, process `pid`. */
async function prepare(
  label: string,
  k: TestKernel,
  pid: number,
  publisher: RpcConnection,
  channel: string,
  subscribe: Subscribe,
): Promise<Way> {
  const baseline = kernelConnections(pid, k.socket);
  const others = new Set(subscriberPids(pid));
  const sentAt: number[] = new Array(2 * EVENTS);
  let arrived: number[] = [];
  let handled: number[] = [];
  let dropped = 0;
  /** Resolves the wait of {@link reached}, once the count it waits for is reached. */
  let target = Infinity;
  let wake = () => {};
  const count = () => handled.length + dropped;
  const subs: Awaited<ReturnType<Subscribe>>[] = [];
  for (let s = 0; s < SUBSCRIBERS; s++) {
    subs.push(
      await subscribe(channel, (payload, arrivedAt) => {
        if (payload.dropped !== undefined) dropped += payload.dropped;
        else if (payload.i !== undefined) {
          arrived.push(arrivedAt - sentAt[payload.i]);
          handled.push(performance.now() - sentAt[payload.i]);
        }
        if (count() >= target) wake();
      }),
    );
  }
  /** Waits until `n` notifications were handled or counted dropped (at most 10 s). */
  const reached = (n: number): Promise<void> => {
    if (count() >= n) return Promise.resolve();
    return new Promise((resolve) => {
      const timer = setTimeout(resolve, 10000);
      target = n;
      wake = () => {
        target = Infinity;
        clearTimeout(timer);
        resolve();
      };
    });
  };
  const subscribed = kernelConnections(pid, k.socket);
  const processes = subscriberPids(pid).filter((p) => !others.has(p));
  const pids = [pid, Deno.pid, ...processes];
  let cpu = pids.map(() => 0);
  let elapsed = 0;
  return {
    label,
    async block(from, n) {
      const cpuBefore = pids.map(cpuMs);
      const started = performance.now();
      const expected = count() + SUBSCRIBERS * n;
      for (let i = from; i < from + n; i++) {
        sentAt[i] = performance.now();
        await publisher.request("events.publish", { channel, payload: { i } });
        // The next event is published once this one has reached every subscriber. (Socket
        // subscribers share this process's event loop with the publisher, so they always held
        // it back like this; subscriber processes did not, and were measured under a rate of
        // the kernel's round trip, behind a queue of events this process made itself.)
        await reached(expected - SUBSCRIBERS * (from + n - 1 - i));
      }
      await waitUntil(() => count() >= expected, 60000);
      elapsed += performance.now() - started;
      cpu = cpu.map((total, i) => total + cpuMs(pids[i]) - cpuBefore[i]);
    },
    round(name) {
      const events = count() / SUBSCRIBERS;
      const [kernelCpu, selfCpu, ...processCpu] = cpu;
      const onWire = quantiles(arrived);
      const inHandler = quantiles(handled);
      console.log(
        `${label}, ${name}: ${SUBSCRIBERS} subscribers x ${events} events in ${
          elapsed.toFixed(0)
        } ms: delivered ${handled.length}, dropped ${dropped}; publish->read ${ms(onWire)}, ` +
          `publish->handler ${ms(inHandler)}, max ${inHandler.max.toFixed(3)} ms`,
      );
      // Per notification: each published event is delivered to every subscriber; a subscriber
      // process forwards every event of its own subscriber.
      const perNotification = (total: number) => total * 1000 / (events * SUBSCRIBERS);
      const processAverage = processCpu.reduce((a, b) => a + b, 0) /
        Math.max(1, processes.length);
      const figures = {
        kernel: perNotification(kernelCpu),
        facade: processes.length > 0 ? processAverage * 1000 / events : null,
        self: perNotification(selfCpu),
      };
      console.log(
        `${label}, ${name}: CPU per notification: kernel ${us(figures.kernel)}, ` +
          (figures.facade !== null ? `each subscriber process ${us(figures.facade)}, ` : "") +
          `subscriber side (this process) ${us(figures.self)}`,
      );
      arrived = [];
      handled = [];
      dropped = 0;
      cpu = pids.map(() => 0);
      elapsed = 0;
      return { arrived: onWire, handled: inHandler, cpu: figures };
    },
    async close() {
      for (const sub of subs) await sub.unsubscribe();
      await waitUntil(() => kernelConnections(pid, k.socket) <= subscribed - SUBSCRIBERS, 5000);
      const unsubscribed = kernelConnections(pid, k.socket);
      for (const sub of subs) await sub.close();
      await waitUntil(() => kernelConnections(pid, k.socket) <= baseline, 5000);
      const closed = kernelConnections(pid, k.socket);
      console.log(
        `${label}: kernel connections ${baseline} before, ${subscribed} subscribed, ` +
          `${unsubscribed} after unsubscribe, ${closed} after the subscribers closed ` +
          `(${closed - baseline} left behind)`,
      );
    },
  };
}

/**
 * Measures every way on fresh subscriber processes (events 0 .. EVENTS - 1), then warmed up (the
 * next EVENTS), the ways taking turns by {@link BLOCK} events.
 */
async function measureAll(ways: Way[]): Promise<Figures[]> {
  const rounds: Round[][] = [];
  for (
    const [from, name] of [[0, "first 1000 (fresh processes)"], [
      EVENTS,
      "next 1000 (warmed up)",
    ]] as const
  ) {
    for (let at = from; at < from + EVENTS; at += BLOCK) {
      for (const way of ways) await way.block(at, Math.min(BLOCK, from + EVENTS - at));
    }
    rounds.push(ways.map((way) => way.round(name)));
  }
  return ways.map((_, w) => ({ cold: rounds[0][w], warm: rounds[1][w] }));
}

function ratios(label: string, path: { p50: number; p95: number }, kernel: Round): void {
  const base = kernel.handled;
  console.log(
    `${label} / kernel socket: p50 ${(path.p50 / base.p50).toFixed(1)}x (target <= 3x), ` +
      `p95 ${(path.p95 / base.p95).toFixed(1)}x (target <= 5x)`,
  );
}

/** Where a notification's time and CPU go, from the rounds of one run. */
function stages(name: string, kernel: Round, bare: Round, stdout: Round, clients: Round): void {
  const hop = (a: { p50: number }, b: { p50: number }) => (b.p50 - a.p50).toFixed(3);
  console.log(
    `stages, ${name} (p50): kernel -> socket subscriber ${kernel.handled.p50.toFixed(3)} ms; ` +
      `+ facade hop (socket -> stdout line read) ${hop(kernel.handled, stdout.arrived)} ms ` +
      `(a bare forwarder: ${hop(kernel.handled, bare.arrived)} ms); ` +
      `+ MCP SDK client (stdout line -> handler) ${hop(clients.arrived, clients.handled)} ms`,
  );
  console.log(
    `stages, ${name} (CPU per notification): kernel ${us(stdout.cpu.kernel)}; facade ${
      us(stdout.cpu.facade)
    } (with SDK clients: ${us(clients.cpu.facade)}; a bare forwarder: ${us(bare.cpu.facade)}); ` +
      `reading it: raw stdout reader ${us(stdout.cpu.self)}, SDK client ${us(clients.cpu.self)}, ` +
      `socket subscriber ${us(kernel.cpu.self)} (all subscribers share this one process)`,
  );
}

/** Subscribers that are plain kernel connections. */
const kernelSubscribe = (k: TestKernel): Subscribe => async (channel, onEvent) => {
  const conn: RpcConnection = await k.attach("default");
  conn.onNotification = (method, params) => {
    if (method === "event") onEvent(params.payload as Payload, performance.now());
  };
  await conn.request("events.subscribe", { channel });
  return {
    unsubscribe: async () => {
      await conn.request("events.unsubscribe", { channel });
      // A raw connection stays open after unsubscribing; close it so the count shows the drop.
      conn.close();
    },
    close: () => Promise.resolve(),
  };
};

/** The SDK transport's child stdout (a private field of StdioClientTransport, read here only). */
interface NodeReadable {
  prependListener(event: "data", listener: (chunk: Uint8Array) => void): void;
}

/** Subscribers that are MCP clients, each with its own facade. */
const mcpSubscribe = (mcps: Mcp[], box: Awaited<ReturnType<typeof sandbox>>): Subscribe =>
async (
  channel,
  onEvent,
) => {
  const mcp = await connectMcp(box);
  mcps.push(mcp);
  const client: Client = mcp.client;
  const uri = `shoal://events/${channel}`;
  // When each stdout line was read, before the SDK parses it: one entry per line, in order.
  const lineReadAt: number[] = [];
  const transport = client.transport as unknown as Transport & {
    _process: { stdout: NodeReadable };
  };
  transport._process.stdout.prependListener("data", (chunk) => {
    const at = performance.now();
    for (const byte of chunk) if (byte === 0x0a) lineReadAt.push(at);
  });
  const arrivedAt = new Map<number, number>();
  const deliver = transport.onmessage!;
  transport.onmessage = (message, extra) => {
    const at = lineReadAt.shift()!;
    const params = (message as { params?: { payload?: Payload } }).params;
    if (params?.payload?.i !== undefined) arrivedAt.set(params.payload.i, at);
    deliver(message, extra);
  };
  client.fallbackNotificationHandler = (n) => {
    const params = n.params as { uri?: string; payload?: Payload };
    if (n.method === "notifications/resources/updated" && params.uri === uri) {
      const payload = params.payload ?? {};
      onEvent(payload, arrivedAt.get(payload.i!) ?? performance.now());
      arrivedAt.delete(payload.i!);
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
  (spawn: () => Deno.ChildProcess, children: Deno.ChildProcess[]): Subscribe =>
  async (channel, onEvent) => {
    const child = spawn();
    children.push(child);
    const stdin = child.stdin.getWriter();
    const uri = `shoal://events/${channel}`;
    const replies = new Map<number, () => void>();
    const request = async (id: number, method: string) => {
      const answered = new Promise<void>((resolve) => replies.set(id, resolve));
      const frame = JSON.stringify({ jsonrpc: "2.0", id, method, params: { uri } }) + "\n";
      await stdin.write(new TextEncoder().encode(frame));
      await answered;
    };
    readFrames(child, (msg, at) => {
      if (msg.kind === "notification" && msg.method === "notifications/resources/updated") {
        onEvent(msg.params.payload as Payload, at);
      } else if (msg.kind === "response") replies.get(msg.id as number)?.();
    });
    await request(1, "resources/subscribe");
    return {
      unsubscribe: () => request(2, "resources/unsubscribe"),
      close: async () => {
        await stdin.close().catch(() => {});
        await child.status;
      },
    };
  };

/** Subscribers behind bare forwarders (event_forwarder.ts): the process hop without a facade. */
const forwarderSubscribe = (k: TestKernel, children: Deno.ChildProcess[]): Subscribe =>
async (
  channel,
  onEvent,
) => {
  const child = new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "-A",
      new URL("./event_forwarder.ts", import.meta.url).pathname,
      k.socket,
      channel,
    ],
    stdin: "null",
    stdout: "piped",
  }).spawn();
  children.push(child);
  let subscribed!: () => void;
  const ready = new Promise<void>((resolve) => subscribed = resolve);
  readFrames(child, (msg, at) => {
    if (msg.kind === "notification" && msg.method === "event") {
      onEvent(msg.params.payload as Payload, at);
    } else if (msg.kind === "response" && msg.id === 2) subscribed();
  });
  await ready;
  return {
    unsubscribe: () => {
      child.kill("SIGTERM");
      return Promise.resolve();
    },
    close: async () => {
      await child.status;
    },
  };
};

const compare = parseArgs({ args: Deno.args, options: { compare: { type: "string" } } }).values
  .compare;
const box = await sandbox();
const mcps: Mcp[] = [];
const children: Deno.ChildProcess[] = [];
try {
  const k = await startKernel([], box);
  // Found before the bare forwarders, whose command lines name the socket too.
  const pid = kernelPid(k.socket);
  const publisher = await k.attach("default");
  // Every way is set up before any is measured, each on its own channel: a way's subscribers
  // wait, blocked on a read, while the others' events are published.
  const ways = [
    await prepare(
      "kernel socket",
      k,
      pid,
      publisher,
      `${CHANNEL}.socket`,
      kernelSubscribe(k),
    ),
    await prepare(
      "bare forwarder",
      k,
      pid,
      publisher,
      `${CHANNEL}.bare`,
      forwarderSubscribe(k, children),
    ),
    await prepare(
      "facade stdout",
      k,
      pid,
      publisher,
      `${CHANNEL}.stdout`,
      stdoutSubscribe(() => spawnFacade(box), children),
    ),
    await prepare(
      "MCP clients",
      k,
      pid,
      publisher,
      `${CHANNEL}.clients`,
      mcpSubscribe(mcps, box),
    ),
  ];
  if (compare !== undefined) {
    // Another checkout's launcher, run as spawnFacade runs this one's.
    const spawn = () =>
      new Deno.Command(`${compare}/bin/shoal-mcp`, {
        env: box.env(),
        clearEnv: true,
        stdin: "piped",
        stdout: "piped",
        stderr: "null",
      }).spawn();
    ways.push(
      await prepare(
        "facade stdout (compare)",
        k,
        pid,
        publisher,
        `${CHANNEL}.compare`,
        stdoutSubscribe(spawn, children),
      ),
    );
  }
  // A facade runs its first idle work (a heap compaction: 19-108 ms each, timed in one run)
  // 2-4 s after its last stdin frame (idle_work.ts). The "facade stdout" ones ran theirs while
  // the others were set up, but 14 of the 20 set up last (MCP clients, compare) ran theirs
  // inside the first round, a cost the rows before them did not carry: two identical facade
  // rows differed by up to 0.5x. So every way starts its first round after that work.
  await delay(2 * IDLE_TICK_MS + 500);
  const [kernel, bare, stdout, clients, compared] = await measureAll(ways);
  // Last set up, first closed: each way's connection counts then start from its own baseline.
  for (const way of [...ways].reverse()) await way.close();
  publisher.close();
  for (const name of ["cold", "warm"] as const) {
    stages(name, kernel[name], bare[name], stdout[name], clients[name]);
    ratios(`${name}: bare forwarder (line read)`, bare[name].arrived, kernel[name]);
    ratios(`${name}: facade stdout (line read)`, stdout[name].arrived, kernel[name]);
    if (compared !== undefined) {
      ratios(`${name}: compared facade stdout (line read)`, compared[name].arrived, kernel[name]);
    }
    ratios(`${name}: MCP clients (stdout line read)`, clients[name].arrived, kernel[name]);
    ratios(`${name}: MCP clients (SDK handler)`, clients[name].handled, kernel[name]);
  }
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
