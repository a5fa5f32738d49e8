// Benchmark: event notification latency, publish → subscriber, on one real kernel, by stage
// (issue 33: MCP notification p50 ≤ 3× the kernel socket's, p95 ≤ 5×).
// Every subscriber runs in a process of its own (event_subscriber.ts), so that no subscriber's
// handler waits for another's on a shared event loop: the figure is what one client sees.
//  1. Kernel socket: N subscriber processes, each one kernel connection (`events.subscribe`).
//  2. Bare forwarder: N processes that do the least a facade could (event_forwarder.ts: attach,
//     subscribe, copy each socket read to stdout), each read by a process of its own: the cost
//     of the process hop alone.
//  3. Facade stdout: N shoal-mcp facades subscribed to `shoal://events/<channel>` by raw frames,
//     each read by a process of its own, so the figure ends where the facade's work ends.
// Stages 2 and 3 read each stdout pipe into one reused buffer and frame and decode its lines as
// the socket subscribers' connections do, so that the reader costs alike on every way.
//  4. MCP clients: N processes, each the pinned MCP SDK `Client` over stdio to its own facade
//     (bin/shoal-mcp): adds the client's parsing and validation.
// With --shared, two ways more, as the bench measured before each subscriber had its own
// process: N kernel connections in one process, and N MCP clients in one process. There a
// notification's last SDK handler waits for the others' (each costs that process 80-100 µs of
// CPU), which inflated the MCP rows, while the one-process socket subscribers were read in one
// wake-up for all N, which deflated the baseline (0.6-0.8x the one-process-each socket p50).
// On a machine of C cores, N > C subscribers of any way still wait for a CPU in turn (the
// kernel socket's too); --subscribers 1 measures what one client alone sees.
// Each way is measured twice on the same subscribers: the first E events reach fresh processes
// (their code still runs unoptimized), the next E reach them warmed up, as the facade of a
// session that has been running for a while is. All ways are set up first, each on its own
// channel, and take turns by 100 events, so that a change in the machine's load (other
// processes) falls alike on each way's figures. Each event is published once the one before has
// reached every subscriber of its way (each subscriber process reports every event on its
// stdout, after taking its times). Latency = arrival − the moment this process sent the
// `events.publish` request, on the clock all processes share, performance.timeOrigin +
// performance.now() (checked against CLOCK_MONOTONIC: processes agree within 0.3 µs; each
// process's offset is taken once, so the sums keep performance.now()'s resolution, under 1 µs).
// --gap MS waits MS ms more before each next event: back to back (0, the default, as before), a
// subscriber process may still be finishing its previous notification (its report, the SDK's
// work after the handler) when the next arrives; with a gap every process waits idle first, as
// for sporadic events, which makes every way's wake-up slower (the kernel socket's p50 about
// doubled in one run at 1 ms) and the MCP ratios smaller.
// Two arrivals are timed: when the line was read from the pipe or socket (before any parsing:
// "line read"), and when the subscriber's handler got it.
// CPU per notification is read from /proc for the kernel, each facade or forwarder, and each
// subscriber process (whose figure includes writing its report line). Afterwards the subscribers unsubscribe and the kernel's connections on its
// socket are counted (lsof) to show that unsubscribing leaves none behind.
// --compare=<checkout>: one more way, "facade stdout (compare)", the facades of another checkout
// (its bin/shoal-mcp, e.g. a `git worktree add --detach /tmp/old main`) on the same kernel, taking
// its turns with the others, so old and new facades are compared in one run.
// Run: deno run -A scripts/bench/events.ts [--subscribers N] [--events E] [--gap MS] [--shared]
//        [--compare=<checkout>]
import { parseArgs } from "node:util";
import type { RpcConnection } from "../../src/protocol/rpc_client.ts";
import { startKernel, type TestKernel } from "../../tests/_support/kernel.ts";
import { cpuMs, kernelConnections, kernelPid } from "../../tests/_support/proc.ts";
import { REPO, type Sandbox, sandbox } from "../../tests/_support/sandbox.ts";
import { delay, waitUntil } from "../../tests/_support/wait.ts";
import { IDLE_TICK_MS } from "../../src/protocol/idle_work.ts";
import { percentile } from "./percentile.ts";

const USAGE =
  "usage: events.ts [--subscribers N] [--events E] [--gap MS] [--shared] [--compare=<checkout>]";

function options() {
  try {
    const { values, positionals } = parseArgs({
      args: Deno.args,
      options: {
        subscribers: { type: "string", default: "10" },
        events: { type: "string", default: "1000" },
        gap: { type: "string", default: "0" },
        shared: { type: "boolean", default: false },
        compare: { type: "string" },
      },
    });
    const subscribers = Number(values.subscribers);
    const events = Number(values.events);
    const gap = Number(values.gap);
    const counts = [subscribers, events].every((n) => Number.isInteger(n) && n > 0);
    const gapOk = Number.isInteger(gap) && gap >= 0 && gap <= 1000;
    if (positionals.length === 0 && counts && gapOk && events <= 100000 && subscribers <= 64) {
      return { subscribers, events, gap, shared: values.shared, compare: values.compare };
    }
  } catch {
    // reported below
  }
  console.error(USAGE);
  Deno.exit(2);
}

const { subscribers: SUBSCRIBERS, events: EVENTS, gap: GAP, shared, compare } = options();
const CHANNEL = "user.bench";
/** Events a way publishes in one turn: the ways take turns, so the machine's load falls alike on each. */
const BLOCK = 100;
const SUBSCRIBER = new URL("./event_subscriber.ts", import.meta.url).pathname;

/** Latency figures of one round (ms), and CPU per notification (µs). */
interface Round {
  arrived: { p50: number; p95: number };
  handled: { p50: number; p95: number };
  cpu: { kernel: number; helper: number | null; subscriber: number };
}

/** A way measured on fresh subscriber processes, then once they have warmed up. */
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

/** One way of subscribing, with its subscriber processes set up. */
interface Way {
  label: string;
  /** Publishes events `from` .. `from + count - 1` to the way's subscribers. */
  block(from: number, count: number): Promise<void>;
  /** Prints and returns the figures of the events published since the last call. */
  round(name: string): Round;
  /** Unsubscribes and closes the subscribers, printing the kernel's connections. */
  close(): Promise<void>;
}

/** A subscriber process: its stdin for commands, and the lines it reports. */
interface SubscriberProcess {
  child: Deno.ChildProcess;
  stdin: WritableStreamDefaultWriter<Uint8Array>;
  /** Its facades' or forwarders' pids. */
  helpers: number[];
  /** Waits for its next report line starting with `word`. */
  expect(word: string): Promise<void>;
}

/** The way a subscriber process is told to subscribe (event_subscriber.ts --mode). */
type Mode = "socket" | "forwarder" | "stdout" | "mcp";

/**
 * Spawns a subscriber process of `count` subscribers and reads its reports: each event line
 * goes to `onEvent` (payload index, times on the shared clock in ms), each dropped count to
 * `onDropped`; resolves once it is ready.
 */
async function spawnSubscriber(
  box: Sandbox,
  mode: Mode,
  args: string[],
  onEvent: (i: number, readAt: number, handledAt: number) => void,
  onDropped: (n: number) => void,
): Promise<SubscriberProcess> {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", `--config=${REPO}/deno.json`, SUBSCRIBER, "--mode", mode, ...args],
    env: box.env(),
    clearEnv: true,
    stdin: "piped",
    stdout: "piped",
    stderr: "inherit",
  }).spawn();
  const waiting = new Map<string, () => void>();
  let origin = 0;
  let helpers: number[] = [];
  let ready!: () => void;
  const started = new Promise<void>((resolve) => ready = resolve);
  (async () => {
    const decoder = new TextDecoder();
    let pending = "";
    for await (const chunk of child.stdout) {
      pending += decoder.decode(chunk, { stream: true });
      let nl: number;
      while ((nl = pending.indexOf("\n")) !== -1) {
        const words = pending.slice(0, nl).split(" ");
        pending = pending.slice(nl + 1);
        if (words[0] === "e") {
          onEvent(Number(words[2]), origin + Number(words[3]), origin + Number(words[4]));
        } else if (words[0] === "d") onDropped(Number(words[2]));
        else if (words[0] === "ready") {
          // Its times relative to this process's origin: small numbers keep their resolution.
          origin = Number(words[1]) - performance.timeOrigin;
          helpers = words[2] === "-" ? [] : words[2].split(",").map(Number);
          ready();
        } else {
          const wake = waiting.get(words[0]);
          waiting.delete(words[0]);
          wake?.();
        }
      }
    }
  })();
  const status = child.status.then((s) => {
    throw new Error(`a ${mode} subscriber process exited (${s.code}) before it was ready`);
  });
  await Promise.race([started, status]);
  status.catch(() => {});
  return {
    child,
    stdin: child.stdin.getWriter(),
    get helpers() {
      return helpers;
    },
    expect: (word) => new Promise((resolve) => waiting.set(word, resolve)),
  };
}

/**
 * Sets up a way on kernel `k` (process `pid`): `processes` subscriber processes of `perProcess`
 * subscribers each, subscribing to `channel` by `mode`.
 */
async function prepare(
  label: string,
  k: TestKernel,
  pid: number,
  publisher: RpcConnection,
  channel: string,
  mode: Mode,
  processes: number,
  perProcess: number,
  extra: string[] = [],
): Promise<Way> {
  const total = processes * perProcess;
  const baseline = kernelConnections(pid, k.socket);
  const sentAt: number[] = new Array(2 * EVENTS);
  let arrived: number[] = [];
  let handled: number[] = [];
  let dropped = 0;
  let target = Infinity;
  let wake = () => {};
  const count = () => handled.length + dropped;
  const onEvent = (i: number, readAt: number, handledAt: number) => {
    arrived.push(readAt - sentAt[i]);
    handled.push(handledAt - sentAt[i]);
    if (count() >= target) wake();
  };
  const onDropped = (n: number) => {
    dropped += n;
    if (count() >= target) wake();
  };
  const args = [
    "--channel",
    channel,
    "--count",
    String(perProcess),
    "--socket",
    k.socket,
    ...extra,
  ];
  const procs: SubscriberProcess[] = [];
  for (let p = 0; p < processes; p++) {
    procs.push(await spawnSubscriber(k.box, mode, args, onEvent, onDropped));
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
  const helpers = procs.flatMap((p) => p.helpers);
  const pids = [pid, ...procs.map((p) => p.child.pid), ...helpers];
  let cpu = pids.map(() => 0);
  let elapsed = 0;
  return {
    label,
    async block(from, n) {
      const cpuBefore = pids.map(cpuMs);
      const started = performance.now();
      const expected = count() + total * n;
      for (let i = from; i < from + n; i++) {
        sentAt[i] = performance.now();
        await publisher.request("events.publish", { channel, payload: { i } });
        // The next event is published once this one has reached every subscriber, and the
        // subscriber processes have had --gap ms to finish their report and wait again.
        await reached(expected - total * (from + n - 1 - i));
        if (GAP > 0) await delay(GAP);
      }
      await waitUntil(() => count() >= expected, 60000);
      elapsed += performance.now() - started;
      cpu = cpu.map((sum, i) => sum + cpuMs(pids[i]) - cpuBefore[i]);
    },
    round(name) {
      const events = count() / total;
      const [kernelCpu, ...rest] = cpu;
      const subscriberCpu = rest.slice(0, processes).reduce((a, b) => a + b, 0);
      const helperCpu = rest.slice(processes).reduce((a, b) => a + b, 0);
      const onWire = quantiles(arrived);
      const inHandler = quantiles(handled);
      console.log(
        `${label}, ${name}: ${total} subscribers in ${processes} processes x ${events} events ` +
          `in ${elapsed.toFixed(0)} ms: delivered ${handled.length}, dropped ${dropped}; ` +
          `publish->read ${ms(onWire)}, publish->handler ${ms(inHandler)}, ` +
          `max ${inHandler.max.toFixed(3)} ms`,
      );
      // Per notification: each published event is delivered to every subscriber.
      const perNotification = (sum: number) => sum * 1000 / (events * total);
      const figures = {
        kernel: perNotification(kernelCpu),
        helper: helpers.length > 0 ? perNotification(helperCpu) : null,
        subscriber: perNotification(subscriberCpu),
      };
      console.log(
        `${label}, ${name}: CPU per notification: kernel ${us(figures.kernel)}, ` +
          (figures.helper !== null ? `facade or forwarder ${us(figures.helper)}, ` : "") +
          `subscriber process ${us(figures.subscriber)}`,
      );
      arrived = [];
      handled = [];
      dropped = 0;
      cpu = pids.map(() => 0);
      elapsed = 0;
      return { arrived: onWire, handled: inHandler, cpu: figures };
    },
    async close() {
      const line = new TextEncoder().encode("unsubscribe\n");
      for (const p of procs) {
        const done = p.expect("unsubscribed");
        await p.stdin.write(line);
        await done;
      }
      await waitUntil(() => kernelConnections(pid, k.socket) <= subscribed - total, 5000);
      const unsubscribed = kernelConnections(pid, k.socket);
      for (const p of procs) {
        await p.stdin.write(new TextEncoder().encode("close\n"));
        await p.stdin.close().catch(() => {});
        await p.child.status;
      }
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
  const names = [`first ${EVENTS} (fresh processes)`, `next ${EVENTS} (warmed up)`];
  for (const [r, from] of [0, EVENTS].entries()) {
    for (let at = from; at < from + EVENTS; at += BLOCK) {
      for (const way of ways) await way.block(at, Math.min(BLOCK, from + EVENTS - at));
    }
    rounds.push(ways.map((way) => way.round(names[r])));
  }
  return ways.map((_, w) => ({ cold: rounds[0][w], warm: rounds[1][w] }));
}

function ratios(label: string, path: { p50: number; p95: number }, base: Round): void {
  console.log(
    `${label}: p50 ${(path.p50 / base.handled.p50).toFixed(1)}x (target <= 3x), ` +
      `p95 ${(path.p95 / base.handled.p95).toFixed(1)}x (target <= 5x)`,
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
      us(stdout.cpu.helper)
    } (with SDK clients: ${us(clients.cpu.helper)}; a bare forwarder: ${us(bare.cpu.helper)}); ` +
      `reading it: raw stdout reader ${us(stdout.cpu.subscriber)}, SDK client ${
        us(clients.cpu.subscriber)
      }, socket subscriber ${us(kernel.cpu.subscriber)}`,
  );
}

const box = await sandbox();
try {
  const k = await startKernel([], box);
  const pid = kernelPid(k.socket);
  const publisher = await k.attach("default");
  const n = SUBSCRIBERS;
  // Every way is set up before any is measured, each on its own channel: a way's subscribers
  // wait, blocked on a read, while the others' events are published.
  const way = (label: string, suffix: string, mode: Mode, procs: number, extra: string[] = []) =>
    prepare(label, k, pid, publisher, `${CHANNEL}.${suffix}`, mode, procs, n / procs, extra);
  const ways = [
    await way("kernel socket", "socket", "socket", n),
    await way("bare forwarder", "bare", "forwarder", n),
    await way("facade stdout", "stdout", "stdout", n),
    await way("MCP clients", "clients", "mcp", n),
  ];
  if (shared) {
    ways.push(await way("kernel socket, one process", "socket1", "socket", 1));
    ways.push(await way("MCP clients, one process", "clients1", "mcp", 1));
  }
  if (compare !== undefined) {
    const launcher = ["--launcher", `${compare}/bin/shoal-mcp`];
    ways.push(await way("facade stdout (compare)", "compare", "stdout", n, launcher));
  }
  // A facade runs its first idle work (a heap compaction: 19-108 ms each, timed in one run)
  // 2-4 s after its last stdin frame (idle_work.ts): every way starts its first round after it.
  await delay(2 * IDLE_TICK_MS + 500);
  const figures = await measureAll(ways);
  // Last set up, first closed: each way's connection counts then start from its own baseline.
  for (const w of [...ways].reverse()) await w.close();
  publisher.close();
  const [kernel, bare, stdout, clients] = figures;
  const byLabel = new Map(ways.map((w, i) => [w.label, figures[i]]));
  for (const name of ["cold", "warm"] as const) {
    stages(name, kernel[name], bare[name], stdout[name], clients[name]);
    const base = kernel[name];
    ratios(`${name}: bare forwarder (line read) / kernel socket`, bare[name].arrived, base);
    ratios(`${name}: facade stdout (line read) / kernel socket`, stdout[name].arrived, base);
    const compared = byLabel.get("facade stdout (compare)");
    if (compared !== undefined) {
      ratios(
        `${name}: compared facade stdout (line read) / kernel socket`,
        compared[name].arrived,
        base,
      );
    }
    ratios(`${name}: MCP clients (stdout line read) / kernel socket`, clients[name].arrived, base);
    ratios(`${name}: MCP clients (SDK handler) / kernel socket`, clients[name].handled, base);
    const socket1 = byLabel.get("kernel socket, one process");
    const clients1 = byLabel.get("MCP clients, one process");
    if (socket1 !== undefined && clients1 !== undefined) {
      const one = socket1[name];
      ratios(
        `${name}: one-process MCP clients (SDK handler) / one-process kernel socket`,
        clients1[name].handled,
        one,
      );
      ratios(
        `${name}: one-process MCP clients (SDK handler) / kernel socket`,
        clients1[name].handled,
        base,
      );
      ratios(`${name}: one-process kernel socket / kernel socket`, one.handled, base);
    }
  }
  await k.stop();
} finally {
  await box.cleanup();
}
