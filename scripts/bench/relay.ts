/**
 * What the release's relay costs (issue 12): `shoal_exec echo hi` through a facade that connects
 * to the kernel socket itself (the local run, `bin/shoal-mcp`) and through one under exactly the
 * release flags, which reaches the kernel through `shoal-kernel connect`, calls interleaved
 * against one kernel in one run. Then the cost of opening a kernel connection either way, and
 * the resident memory of the relay beside the facades and the kernel. The relay runs as
 * `bin/shoal-kernel` (a shell wrapper and `deno run`), so an idle `deno run` is measured beside
 * it: what the relay adds to the runtime it starts in.
 */
// @ts-types="@modelcontextprotocol/sdk/client/index"
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { RpcConnection } from "../../src/protocol/rpc_client.ts";
import { connectThroughRelay } from "../../src/mcp/relay.ts";
import { releaseTransport, sdkTransport } from "../../tests/_support/facade.ts";
import { startKernel } from "../../tests/_support/kernel.ts";
import { childrenMentioning, rssBytes } from "../../tests/_support/proc.ts";
import { KERNEL_BIN } from "../../tests/_support/sandbox.ts";
import { percentile } from "./percentile.ts";

const N = 100;
const CONNECTS = 20;

/** p50 and p95 of ascending `samples`, in ms. */
function quantiles(samples: number[]): { p50: number; p95: number } {
  samples.sort((a, b) => a - b);
  return { p50: percentile(samples, 0.5), p95: percentile(samples, 0.95) };
}

async function timed(run: () => Promise<unknown>): Promise<number> {
  const t0 = performance.now();
  await run();
  return performance.now() - t0;
}

const mb = (bytes: number) => `${(bytes / 2 ** 20).toFixed(1)} MB`;

const load = new TextDecoder().decode(new Deno.Command("uptime").outputSync().stdout).trim();
const kernel = await startKernel();
const socket = kernel.socket;
const direct = new Client({ name: "bench", version: "0" });
const relayed = new Client({ name: "bench", version: "0" });
try {
  const directTransport = sdkTransport(kernel.box, { SHOAL_NO_AUTOSTART: "1" });
  const releaseTransportUsed = releaseTransport(kernel.box, { SHOAL_NO_AUTOSTART: "1" });
  await direct.connect(directTransport);
  await relayed.connect(releaseTransportUsed);
  const call = (c: Client) => c.callTool({ name: "shoal_exec", arguments: { src: "echo hi" } });
  for (let i = 0; i < 10; i++) await Promise.all([call(direct), call(relayed)]);
  const samples = { direct: [] as number[], relayed: [] as number[] };
  for (let i = 0; i < N; i++) {
    // Alternate which goes first, so load drifts hit both alike.
    const order = i % 2 === 0 ? ["direct", "relayed"] as const : ["relayed", "direct"] as const;
    for (const which of order) {
      samples[which].push(await timed(() => call(which === "direct" ? direct : relayed)));
    }
  }
  const d = quantiles(samples.direct);
  const r = quantiles(samples.relayed);

  const opens = { direct: [] as number[], relayed: [] as number[] };
  for (let i = 0; i < CONNECTS; i++) {
    opens.direct.push(await timed(async () => (await RpcConnection.connect(socket)).close()));
    opens.relayed.push(
      await timed(async () => (await connectThroughRelay(KERNEL_BIN, socket, null, null)).close()),
    );
  }
  const od = quantiles(opens.direct);
  const or = quantiles(opens.relayed);
  const idle = await Deno.makeTempFile({ suffix: ".ts" });
  await Deno.writeTextFile(idle, "if (Deno.args[0] === 'wait') setInterval(() => {}, 1000);\n");
  const runtime = (args: string[]) =>
    new Deno.Command(Deno.execPath(), { args: ["run", "--quiet", idle, ...args], stdout: "null" });
  const starts: number[] = [];
  for (let i = 0; i < CONNECTS; i++) starts.push(await timed(() => runtime([]).output()));
  const rs = quantiles(starts);
  const waiting = runtime(["wait"]).spawn();
  await new Promise((resolve) => setTimeout(resolve, 1000));

  const [relayPid] = childrenMentioning(releaseTransportUsed.pid!, " connect ");
  const memory = [
    ["relay (shoal-kernel connect)", rssBytes(relayPid)],
    ["facade, release flags", rssBytes(releaseTransportUsed.pid!)],
    ["facade, local run", rssBytes(directTransport.pid!)],
    ["kernel", rssBytes(kernel.child.pid)],
    ["idle deno run (runtime alone)", rssBytes(waiting.pid)],
  ] as const;
  waiting.kill("SIGKILL");
  await waiting.status;
  await Deno.remove(idle);

  console.log(`load: ${load}`);
  console.log(`shoal_exec echo hi via the facade, ${N} calls each, interleaved (ms)`);
  console.log("path                              p50      p95");
  const row = (label: string, q: { p50: number; p95: number }) =>
    console.log(
      `${label.padEnd(30)} ${q.p50.toFixed(2).padStart(7)}  ${q.p95.toFixed(2).padStart(7)}`,
    );
  row("direct (local run)", d);
  row("through the relay (release)", r);
  console.log(`relay / direct p50: ${(r.p50 / d.p50).toFixed(2)}`);
  console.log(`\nopening a kernel connection, ${CONNECTS} times each (ms)`);
  row("Deno.connect", od);
  row("relay spawn until connected", or);
  row("idle deno run, spawn to exit", rs);
  console.log("\nresident memory (VmRSS) with the main connection open");
  for (const [label, bytes] of memory) console.log(`${label.padEnd(30)} ${mb(bytes).padStart(9)}`);
  console.log(`relay RSS beyond the idle runtime: ${mb(memory[0][1] - memory[4][1])}`);
} finally {
  await direct.close().catch(() => {});
  await relayed.close().catch(() => {});
  await kernel.cleanup();
}
