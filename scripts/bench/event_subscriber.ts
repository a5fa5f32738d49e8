// One subscriber process of scripts/bench/events.ts: hosts `--count` subscribers of one channel,
// each the way `--mode` names, and reports every event each of them got on its stdout, so that
// the bench measures every subscriber in a process of its own (or several sharing one, as its
// rows of the old kind do) rather than all of them in the bench's own event loop.
//   socket     a kernel connection (`events.subscribe`) on `--socket`;
//   forwarder  a bare forwarder (event_forwarder.ts) on `--socket`, its stdout read here;
//   stdout     a facade (`--launcher`, default bin/shoal-mcp) subscribed to
//              shoal://events/<channel> by raw frames, its stdout read here;
//   mcp        the pinned MCP SDK `Client` over stdio to a facade (bin/shoal-mcp).
// The facades find the kernel by the environment this process is given (the bench's sandbox).
// Times are `performance.now()` of this process; the ready line gives `performance.timeOrigin`,
// which puts them on the clock every process shares (the bench checked them against
// CLOCK_MONOTONIC: processes agree within 0.3 µs).
// Lines out: `ready <timeOrigin> <pid,…>` (the pids of the facades or forwarders, or -) once all
// are subscribed; `e <s> <i> <read> <handled>` per event payload {i} to subscriber s (read: when
// its line was read, before parsing; handled: when the subscriber's handler got it); `d <s> <n>`
// per synthetic dropped event (K-EVT-10); `unsubscribed` after the stdin line `unsubscribe`.
// Stdin closing (or `close`) closes the subscribers and ends the process.
// Run: deno run -A scripts/bench/event_subscriber.ts --mode M --channel C --count K [--socket S]
//        [--launcher L]
import { parseArgs } from "node:util";
// @ts-types="@modelcontextprotocol/sdk/client/index"
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
// @ts-types="@modelcontextprotocol/sdk/client/stdio"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
// @ts-types="@modelcontextprotocol/sdk/shared/transport"
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import { RpcConnection } from "../../src/protocol/rpc_client.ts";
import { launcherArgs, spawnLauncher } from "../../tests/_support/facade.ts";
import { readFrames } from "./stdout_frames.ts";

const MODES = ["socket", "forwarder", "stdout", "mcp"] as const;
type Mode = typeof MODES[number];

function usage(): never {
  console.error(
    "usage: event_subscriber.ts --mode socket|forwarder|stdout|mcp --channel C --count K " +
      "[--socket S] [--launcher L]",
  );
  Deno.exit(2);
}

function options() {
  try {
    return parseArgs({
      args: Deno.args,
      options: {
        mode: { type: "string" },
        channel: { type: "string" },
        count: { type: "string" },
        socket: { type: "string" },
        launcher: { type: "string" },
      },
    }).values;
  } catch {
    usage();
  }
}
const parsed = options();
const mode = parsed.mode as Mode;
const channel = parsed.channel ?? "";
const count = Number(parsed.count);
const socket = parsed.socket ?? "";
if (!MODES.includes(mode) || channel === "" || !(Number.isInteger(count) && count > 0)) usage();
if ((mode === "socket" || mode === "forwarder") && socket === "") usage();

const encoder = new TextEncoder();
/** Writes a line to the bench, whole, before anything else runs. */
function report(line: string): void {
  const bytes = encoder.encode(line + "\n");
  let at = 0;
  while (at < bytes.length) at += Deno.stdout.writeSync(bytes.subarray(at));
}

type Payload = { i?: number; dropped?: number };
/** One subscriber's handler: the payload and when its line was read; now is when it was handled. */
function handler(s: number) {
  return (payload: Payload, readAt: number) => {
    const handledAt = performance.now();
    if (payload.dropped !== undefined) report(`d ${s} ${payload.dropped}`);
    else if (payload.i !== undefined) report(`e ${s} ${payload.i} ${readAt} ${handledAt}`);
  };
}

interface Subscriber {
  /** The pid of its facade or forwarder process, if any. */
  pid: number | null;
  unsubscribe(): Promise<void>;
  close(): Promise<void>;
}

const uri = `shoal://events/${channel}`;

async function socketSubscriber(onEvent: ReturnType<typeof handler>): Promise<Subscriber> {
  const conn = await RpcConnection.connect(socket);
  await conn.request("session.attach", {
    session: "default",
    token: null,
    client: { kind: "bench", tty: false },
  });
  conn.onNotification = (method, params) => {
    if (method === "event") onEvent(params.payload as Payload, performance.now());
  };
  await conn.request("events.subscribe", { channel });
  return {
    pid: null,
    unsubscribe: async () => {
      await conn.request("events.unsubscribe", { channel });
      // A raw connection stays open after unsubscribing; close it so the count shows the drop.
      conn.close();
    },
    close: () => Promise.resolve(),
  };
}

async function forwarderSubscriber(onEvent: ReturnType<typeof handler>): Promise<Subscriber> {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", new URL("./event_forwarder.ts", import.meta.url).pathname, socket, channel],
    stdin: "null",
    stdout: "piped",
  }).spawn();
  let subscribed!: () => void;
  const ready = new Promise<void>((resolve) => subscribed = resolve);
  readFrames(child, (msg, at) => {
    if (msg.kind === "notification" && msg.method === "event") {
      onEvent(msg.params.payload as Payload, at);
    } else if (msg.kind === "response" && msg.id === 2) subscribed();
  });
  await ready;
  return {
    pid: child.pid,
    unsubscribe: () => {
      child.kill("SIGTERM");
      return Promise.resolve();
    },
    close: async () => {
      await child.status;
    },
  };
}

async function stdoutSubscriber(onEvent: ReturnType<typeof handler>): Promise<Subscriber> {
  const env = Deno.env.toObject();
  const child = parsed.launcher === undefined
    ? spawnLauncher(env, [], "null")
    : new Deno.Command(parsed.launcher, {
      env,
      clearEnv: true,
      stdin: "piped",
      stdout: "piped",
      stderr: "null",
    }).spawn();
  const stdin = child.stdin.getWriter();
  const replies = new Map<number, () => void>();
  const request = async (id: number, method: string) => {
    const answered = new Promise<void>((resolve) => replies.set(id, resolve));
    const frame = JSON.stringify({ jsonrpc: "2.0", id, method, params: { uri } }) + "\n";
    await stdin.write(encoder.encode(frame));
    await answered;
  };
  readFrames(child, (msg, at) => {
    if (msg.kind === "notification" && msg.method === "notifications/resources/updated") {
      onEvent(msg.params.payload as Payload, at);
    } else if (msg.kind === "response") replies.get(msg.id as number)?.();
  });
  await request(1, "resources/subscribe");
  return {
    pid: child.pid,
    unsubscribe: () => request(2, "resources/unsubscribe"),
    close: async () => {
      await stdin.close().catch(() => {});
      await child.status;
    },
  };
}

/** The SDK transport's child stdout (a private field of StdioClientTransport, read here only). */
interface NodeReadable {
  prependListener(event: "data", listener: (chunk: Uint8Array) => void): void;
}

async function mcpSubscriber(onEvent: ReturnType<typeof handler>): Promise<Subscriber> {
  const client = new Client({ name: "shoal-bench", version: "0" });
  const transport = new StdioClientTransport({
    ...launcherArgs(),
    env: Deno.env.toObject(),
    stderr: "ignore",
  });
  await client.connect(transport);
  // When each stdout line was read, before the SDK parses it: one entry per line, in order.
  const lineReadAt: number[] = [];
  const inner = transport as unknown as Transport & { _process: { stdout: NodeReadable } };
  inner._process.stdout.prependListener("data", (chunk) => {
    const at = performance.now();
    for (const byte of chunk) if (byte === 0x0a) lineReadAt.push(at);
  });
  const readAt = new Map<number, number>();
  const deliver = inner.onmessage!;
  inner.onmessage = (message, extra) => {
    const at = lineReadAt.shift()!;
    const params = (message as { params?: { payload?: Payload } }).params;
    if (params?.payload?.i !== undefined) readAt.set(params.payload.i, at);
    deliver(message, extra);
  };
  // The SDK's typed handler would strip `payload` (M-SUB-3), so take the raw notification.
  client.fallbackNotificationHandler = (n) => {
    const params = n.params as { uri?: string; payload?: Payload };
    if (n.method === "notifications/resources/updated" && params.uri === uri) {
      const payload = params.payload ?? {};
      onEvent(payload, readAt.get(payload.i!) ?? performance.now());
      readAt.delete(payload.i!);
    }
    return Promise.resolve();
  };
  await client.subscribeResource({ uri });
  return {
    pid: transport.pid,
    unsubscribe: async () => {
      await client.unsubscribeResource({ uri });
    },
    close: () => client.close(),
  };
}

const make = {
  socket: socketSubscriber,
  forwarder: forwarderSubscriber,
  stdout: stdoutSubscriber,
  mcp: mcpSubscriber,
}[mode];
const subscribers: Subscriber[] = [];
for (let s = 0; s < count; s++) subscribers.push(await make(handler(s)));
const pids = subscribers.map((sub) => sub.pid).filter((pid) => pid !== null);
report(`ready ${performance.timeOrigin} ${pids.length > 0 ? pids.join(",") : "-"}`);

// Commands from the bench, one a line, until `close` or the end of stdin.
const decoder = new TextDecoder();
let pending = "";
let closing = false;
for await (const chunk of Deno.stdin.readable) {
  pending += decoder.decode(chunk, { stream: true });
  let nl: number;
  while (!closing && (nl = pending.indexOf("\n")) !== -1) {
    const command = pending.slice(0, nl);
    pending = pending.slice(nl + 1);
    if (command === "unsubscribe") {
      for (const sub of subscribers) await sub.unsubscribe();
      report("unsubscribed");
    } else if (command === "close") closing = true;
  }
  if (closing) break;
}
for (const sub of subscribers) await sub.close();
Deno.exit(0);
