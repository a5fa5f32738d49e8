/**
 * The facade's share of an exec (issue 10 point 4), stage by stage, in one run on one kernel:
 *  - kernel direct: `exec {src}` on an attached socket connection;
 *  - kernel direct, facade params: `exec` with exactly the params the facade sends for
 *    `shoal_exec {src}` (mode, position, background, timeout_ms of M-PROG-1);
 *  - bare forwarder: those `exec` frames through a process that copies its stdin to the kernel
 *    socket and the socket to its stdout (exec_forwarder.ts): the floor of two process hops;
 *  - facade, raw frames: `tools/call shoal_exec` written to a facade's stdin by hand and its reply
 *    read from stdout (no MCP SDK client): total less the row above is the facade's own share;
 *  - facade, tapped: the same through a second facade whose kernel connection runs through a
 *    byte-copying tap in this process, which timestamps when the request left the facade and when
 *    the reply came back from the kernel: stdin → request at the tap (the facade's inbound work),
 *    request → reply (kernel and socket), reply → stdout line read (the facade's outbound work);
 *  - SDK client: `client.callTool` through a third facade: less the raw row, the MCP SDK client's
 *    own cost (in this process: it counts for every server a client drives, the peer's too).
 * All on the session `default`; rows take turns by blocks of 20 calls so that the machine's load
 * falls alike on each. --compare=<checkout> adds the tapped facade of another checkout (its
 * bin/shoal-mcp, e.g. a `git worktree add --detach /tmp/old main`) on the same kernel and tap.
 * `--spacing MS` waits that long before each timed call (the rows still take turns by blocks).
 * Run: deno run -A scripts/bench/facade_stages.ts [--calls N] [--compare=<checkout>] [--spacing MS]
 */
import { parseArgs } from "node:util";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { RpcConnection } from "../../src/protocol/rpc_client.ts";
import { startKernel } from "../../tests/_support/kernel.ts";
import { cpuMs, spawnPiped } from "../../tests/_support/proc.ts";
import { sdkTransport } from "../../tests/_support/facade.ts";
import { REPO } from "../../tests/_support/sandbox.ts";
import { percentile } from "./percentile.ts";
import { readFrames } from "./stdout_frames.ts";

const { values } = parseArgs({
  args: Deno.args,
  options: { calls: { type: "string" }, compare: { type: "string" }, spacing: { type: "string" } },
});
const N = Number(values.calls ?? 400);
/** `--spacing MS`: each timed call waits that long first, as an agent calls and then thinks. */
const SPACING = Number(values.spacing ?? 0);
const BLOCK = 20;
const SRC = "echo hi";
/** What the facade sends for `shoal_exec {src}` (M-TOOL-3, M-PROG-1). */
const FACADE_PARAMS = {
  src: SRC,
  mode: "run",
  position: "value",
  background: false,
  timeout_ms: 1000,
};

/**
 * A child driven by raw frames on its stdin and stdout: `call()` sends request `frame(id)` and
 * resolves with when it was written and when the response with that id was read.
 */
function framedChild(child: Deno.ChildProcess, frame: (id: number) => unknown) {
  const stdin = child.stdin.getWriter();
  const replies = new Map<number, (at: number) => void>();
  readFrames(child, (msg, at) => {
    if (msg.kind === "response") replies.get(msg.id as number)?.(at);
  });
  let id = 0;
  const encoder = new TextEncoder();
  return {
    pid: child.pid,
    async call(): Promise<{ sent: number; read: number }> {
      const n = ++id;
      const bytes = encoder.encode(JSON.stringify(frame(n)) + "\n");
      const read = new Promise<number>((resolve) => replies.set(n, resolve));
      const sent = performance.now();
      await stdin.write(bytes);
      const at = await read;
      replies.delete(n);
      return { sent, read: at };
    },
    async close() {
      await stdin.close().catch(() => {});
      await child.status;
    },
  };
}

/**
 * The facade of checkout `root`, started as MCP clients start it (`bin/shoal-mcp`) with `args`
 * and exactly `env`, driven by raw frames.
 */
function rawFacade(args: string[], env: Record<string, string>, root = REPO) {
  const child = spawnPiped([`${root}/bin/shoal-mcp`, ...args], env, "null");
  return framedChild(child, (id) => ({
    jsonrpc: "2.0",
    id,
    method: "tools/call",
    params: { name: "shoal_exec", arguments: { src: SRC } },
  }));
}

/** The bare forwarder (exec_forwarder.ts) on `socket`, sent kernel `exec` frames. */
function bareForwarder(socket: string) {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", new URL("./exec_forwarder.ts", import.meta.url).pathname, socket],
    stdin: "piped",
    stdout: "piped",
    stderr: "inherit",
  }).spawn();
  return framedChild(
    child,
    (id) => ({ jsonrpc: "2.0", id, method: "exec", params: FACADE_PARAMS }),
  );
}

/** A tap at `path` copying bytes to and from `upstream`, noting when each side's last read came. */
function tap(path: string, upstream: string) {
  const times = { toKernel: 0, fromKernel: 0 };
  const listener = Deno.listen({ transport: "unix", path });
  const conns: Deno.Conn[] = [];
  const pipe = async (from: Deno.Conn, to: Deno.Conn, side: "toKernel" | "fromKernel") => {
    const buf = new Uint8Array(64 * 1024);
    try {
      while (true) {
        const n = await from.read(buf);
        if (n === null) break;
        times[side] = performance.now();
        for (let at = 0; at < n;) at += await to.write(buf.subarray(at, n));
      }
    } catch {
      // a side went away
    }
  };
  (async () => {
    try {
      for await (const down of listener) {
        const up = await Deno.connect({ transport: "unix", path: upstream });
        conns.push(down, up);
        pipe(down, up, "toKernel");
        pipe(up, down, "fromKernel");
      }
    } catch {
      // listener closed
    }
  })();
  return {
    times,
    close() {
      listener.close();
      for (const c of conns) {
        try {
          c.close();
        } catch {
          // already closed
        }
      }
    },
  };
}

const kernel = await startKernel();
const box = kernel.box;
const direct: RpcConnection = await kernel.attach("default");
const raw = rawFacade([], box.env());

const tapPath = `${box.dir}/tap.sock`;
const tapped = tap(tapPath, kernel.socket);
const bare = bareForwarder(tapPath);
const tapEnv = box.env({ SHOAL_NO_AUTOSTART: "1" });
const viaTap = rawFacade(["--socket", tapPath], tapEnv);
const compared = values.compare === undefined
  ? null
  : rawFacade(["--socket", tapPath], tapEnv, values.compare);
const client = new Client({ name: "bench", version: "0" });
await client.connect(sdkTransport(box));

/** Stages of a call through the tap: inbound (stdin → tap), kernel, outbound (tap → stdout). */
interface Stages {
  in: number[];
  kernel: number[];
  out: number[];
  /** CPU time of the process, in ms over the calls timed. */
  cpu: number;
}
const newStages = (): Stages => ({ in: [], kernel: [], out: [], cpu: 0 });
const bareStages = newStages();
const facadeStages = newStages();
const comparedStages = newStages();
/** Runs `call` and notes its stages by the tap's times into `stages`. */
async function staged(
  child: { pid: number; call: () => Promise<{ sent: number; read: number }> },
  stages: Stages,
): Promise<void> {
  const cpu = cpuMs(child.pid);
  const { sent, read } = await child.call();
  stages.cpu += cpuMs(child.pid) - cpu;
  stages.in.push(tapped.times.toKernel - sent);
  stages.kernel.push(tapped.times.fromKernel - tapped.times.toKernel);
  stages.out.push(read - tapped.times.fromKernel);
}
const rows: [string, () => Promise<unknown>][] = [
  ["kernel direct: exec {src}", () => direct.request("exec", { src: SRC })],
  ["kernel direct: exec with the facade's params", () => direct.request("exec", FACADE_PARAMS)],
  ["bare forwarder (tapped): exec frames", () => staged(bare, bareStages)],
  ["facade (tapped), raw frames", () => staged(viaTap, facadeStages)],
  ...(compared === null ? [] : [[
    `compared facade ${values.compare} (tapped), raw frames`,
    () => staged(compared, comparedStages),
  ] as [string, () => Promise<unknown>]]),
  ["facade, raw frames (no SDK client)", () => raw.call()],
  [
    "facade, MCP SDK client",
    () => client.callTool({ name: "shoal_exec", arguments: { src: SRC } }),
  ],
];

try {
  for (const [, run] of rows) for (let i = 0; i < 10; i++) await run();
  for (const stages of [bareStages, facadeStages, comparedStages]) {
    for (const list of [stages.in, stages.kernel, stages.out]) list.length = 0;
    stages.cpu = 0;
  }
  const samples = rows.map((): number[] => []);
  for (let block = 0; block < N / BLOCK; block++) {
    for (const [k, [, run]] of rows.entries()) {
      for (let i = 0; i < BLOCK; i++) {
        if (SPACING > 0) await new Promise((resolve) => setTimeout(resolve, SPACING));
        const t0 = performance.now();
        await run();
        samples[k].push(performance.now() - t0);
      }
    }
  }
  const q = (xs: number[]) => {
    const sorted = [...xs].sort((a, b) => a - b);
    return { p50: percentile(sorted, 0.5), p95: percentile(sorted, 0.95) };
  };
  const p50s: number[] = [];
  for (const [k, [label]] of rows.entries()) {
    const { p50, p95 } = q(samples[k]);
    p50s.push(p50);
    console.log(`${label}: p50 ${p50.toFixed(3)} ms, p95 ${p95.toFixed(3)} ms (${N} calls)`);
  }
  const [plain, sameParams] = p50s;
  const [rawFacadeP50, sdk] = p50s.slice(-2);
  const ms = (x: number) => `${x.toFixed(3)} ms`;
  console.log(
    `facade's share (p50): raw facade - kernel direct with its params ${
      ms(rawFacadeP50 - sameParams)
    }; the params' cost in the kernel ${ms(sameParams - plain)}; the SDK client's ${
      ms(sdk - rawFacadeP50)
    }`,
  );
  const s = (xs: number[]) => q(xs).p50;
  const staging: [string, Stages][] = [["bare forwarder", bareStages], ["facade", facadeStages]];
  if (compared !== null) staging.push(["compared facade", comparedStages]);
  for (const [label, stages] of staging) {
    console.log(
      `stages through the tap, ${label} (p50): stdin -> request at the kernel socket ${
        ms(s(stages.in))
      }; kernel ${ms(s(stages.kernel))}; reply -> stdout line read ${ms(s(stages.out))}; CPU ${
        (stages.cpu * 1000 / stages.in.length).toFixed(0)
      } µs per call`,
    );
  }
  for (const [label, stages] of staging.slice(1)) {
    console.log(
      `the ${label}'s own work beyond the hops (p50): inbound ${
        ms(s(stages.in) - s(bareStages.in))
      }, outbound ${ms(s(stages.out) - s(bareStages.out))}`,
    );
  }
} finally {
  direct.close();
  await client.close().catch(() => {});
  await raw.close();
  await bare.close();
  await viaTap.close();
  await compared?.close();
  tapped.close();
  await kernel.cleanup();
}
