// Benchmark: event notification latency through a real kernel over its Unix socket. One
// connection publishes 1000 `user.*` events (awaiting each reply); 10 subscriber connections
// receive them. Latency = arrival at a subscriber − the moment the publish request was sent
// (one clock: this process). Afterwards the subscribers unsubscribe and disconnect, and the
// kernel's connections (its socket fds in /proc/<kernel pid>/fd that /proc/net/unix lists on
// the kernel socket path) are counted to show none were left behind.
// Run: deno run -A scripts/bench/events.ts
import { RpcConnection } from "../../src/protocol/rpc_client.ts";
import { kernelConnections } from "../../tests/_support/proc.ts";
import { KERNEL_BIN } from "../../tests/_support/sandbox.ts";

const SUBSCRIBERS = 10;
const EVENTS = 1000;
const CHANNEL = "user.bench";

/** Polls `check` every 10 ms for at most `ms`; returns whether it held. */
async function waitFor(check: () => boolean, ms: number): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() >= deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  return true;
}

function percentile(sorted: number[], p: number): string {
  return sorted[Math.max(0, Math.ceil(p * sorted.length) - 1)].toFixed(3);
}

const dir = await Deno.makeTempDir({ prefix: "shoal_bench_events_" });
const socket = `${dir}/k.sock`;
const kernel = new Deno.Command(KERNEL_BIN, {
  args: ["--socket", socket, "--state-dir", `${dir}/state`],
  env: {
    PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin",
    HOME: dir,
    XDG_CONFIG_HOME: dir,
    // Keep the user's module cache: HOME moved, and the kernel runs under deno.
    DENO_DIR: Deno.env.get("DENO_DIR") ?? `${Deno.env.get("HOME")}/.cache/deno`,
  },
  clearEnv: true,
  stdin: "null",
  stdout: "null",
  stderr: "piped",
}).spawn();
const stderr = kernel.stderr.pipeThrough(new TextDecoderStream()).getReader();
try {
  let banner = "";
  while (!banner.includes("ready")) {
    const { done, value } = await stderr.read();
    if (done) throw new Error(`kernel did not start: ${banner}`);
    banner += value;
  }
  const attach = async () => {
    const conn = await RpcConnection.connect(socket);
    await conn.request("session.attach", { client: { kind: "bench" } });
    return conn;
  };
  const publisher = await attach();
  const baseline = kernelConnections(kernel.pid, socket);

  const sentAt: number[] = new Array(EVENTS);
  const latencies: number[] = [];
  let dropped = 0;
  const subscribers: RpcConnection[] = [];
  for (let s = 0; s < SUBSCRIBERS; s++) {
    const conn = await attach();
    conn.onNotification = (method, params) => {
      if (method !== "event") return;
      const payload = params.payload as { i?: number; dropped?: number };
      if (payload.dropped !== undefined) dropped += payload.dropped;
      else latencies.push(performance.now() - sentAt[payload.i!]);
    };
    await conn.request("events.subscribe", { channel: CHANNEL });
    subscribers.push(conn);
  }
  const subscribed = kernelConnections(kernel.pid, socket);

  const started = performance.now();
  for (let i = 0; i < EVENTS; i++) {
    sentAt[i] = performance.now();
    await publisher.request("events.publish", { channel: CHANNEL, payload: { i } });
  }
  await waitFor(() => latencies.length + dropped >= SUBSCRIBERS * EVENTS, 10000);
  const elapsed = performance.now() - started;

  for (const conn of subscribers) await conn.request("events.unsubscribe", { channel: CHANNEL });
  const unsubscribed = kernelConnections(kernel.pid, socket);
  for (const conn of subscribers) conn.close();
  await waitFor(() => kernelConnections(kernel.pid, socket) <= baseline, 5000);
  const closed = kernelConnections(kernel.pid, socket);
  publisher.close();

  const sorted = [...latencies].sort((a, b) => a - b);
  console.log(
    `events (kernel socket): ${SUBSCRIBERS} subscribers x ${EVENTS} events in ` +
      `${elapsed.toFixed(0)} ms: delivered ${sorted.length}, dropped ${dropped}; ` +
      `publish->notification p50 ${percentile(sorted, 0.5)} ms, ` +
      `p95 ${percentile(sorted, 0.95)} ms, max ${percentile(sorted, 1)} ms`,
  );
  console.log(
    `events (kernel socket): kernel connections: ${baseline} (publisher) before subscribing, ` +
      `${subscribed} subscribed, ${unsubscribed} after unsubscribe (connections stay open), ` +
      `${closed} after the subscribers disconnected (${closed - baseline} left behind)`,
  );
} finally {
  try {
    kernel.kill("SIGTERM");
  } catch {
    // already exited
  }
  await kernel.status;
  await stderr.cancel().catch(() => {});
  await Deno.remove(dir, { recursive: true });
}
