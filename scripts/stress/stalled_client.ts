/**
 * Slow and stalled clients (issue 13): one MCP client subscribes to `shoal://events/user.flood`,
 * starts a long `shoal_exec` with a progress token (output and progress notifications), then
 * stops reading its facade's stdout while a kernel connection publishes 20,000 events of 1 KiB
 * on that channel (with `--non-blocking-stdout` that stdout is a non-blocking pipe, as some
 * clients hand it over). Prints the exec p50 of three other facades and of a direct kernel connection
 * during the stall against before it (same run), the stalled facade's and the kernel's RSS growth
 * while 20 MB were published, and, once reading resumes, whether the client caught up: progress
 * notifications came again (the exec runs until then), its result arrived, and every published
 * event was either delivered once or counted in a K-EVT-10 `{dropped, latest_seq}` notification,
 * up to the last seq, and no stdout line was other than a whole frame.
 *
 *   deno run -A scripts/stress/stalled_client.ts [--events N] [--non-blocking-stdout]
 */
// @ts-types="@modelcontextprotocol/sdk/client/index"
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { RpcConnection } from "../../src/protocol/rpc_client.ts";
import { connectMcp, type Mcp } from "../../tests/e2e/_mcp.ts";
import { kernelPid, kernelPids, processLive, rssBytes } from "../../tests/_support/proc.ts";
import type { Rec } from "../../tests/_support/rec.ts";
import { sandbox } from "../../tests/_support/sandbox.ts";
import { CountingStdio, NON_BLOCKING_STDOUT } from "../../tests/_support/stdio_client.ts";
import { waitUntil } from "../../tests/_support/wait.ts";
import { percentile } from "../bench/percentile.ts";
import { intFlag, mib, Report } from "./report.ts";

const EVENTS = intFlag(Deno.args, "events", 20_000);
const PAYLOAD = "x".repeat(1000);
const OTHERS = 3;
const SAMPLES = 30;
/** Latency during the stall may be at most this many times the p50 before it. */
const LATENCY_RATIO = 2;
const FACADE_GROWTH_MIB = 32;
/** Progress notifications the client must get after it reads again, before the exec ends. */
const PROGRESS_AFTER_RESUME = 2;
const nonBlocking = Deno.args.includes("--non-blocking-stdout");

const box = await sandbox();
const socket = box.socket();
const env = box.env({ SHOAL_SOCKET: socket });
const load = `${EVENTS} events of 1 KiB while stalled, ${OTHERS} other facades` +
  (nonBlocking ? ", non-blocking stdout" : "");
const report = new Report(`slow and stalled client: ${load}`);
const others: Mcp[] = [];
const transport = new CountingStdio(env, nonBlocking ? NON_BLOCKING_STDOUT : []);
const stalled = new Client({ name: "stalled", version: "0" });
let direct: RpcConnection | null = null;
try {
  for (let i = 0; i < OTHERS; i++) others.push(await connectMcp(box, { SHOAL_SOCKET: socket }));
  // Facades started at once may each autostart a kernel; all but one exit once one serves.
  await waitUntil(() => kernelPids(socket).length === 1, 30_000);
  const kernel = kernelPid(socket);
  direct = await RpcConnection.connect(socket);
  await direct.request("session.attach", { session: "direct" });
  const updates: Rec[] = [];
  let progress = 0;
  stalled.fallbackNotificationHandler = (n) => {
    if (n.method === "notifications/resources/updated") updates.push(n.params as Rec);
    return Promise.resolve();
  };
  await stalled.connect(transport);
  const facade = transport.child!.pid;
  await stalled.subscribeResource({ uri: "shoal://events/user.flood" });

  /** The p50 in ms of SAMPLES execs by every other facade and by the direct connection. */
  const latencies = async () => {
    const facades: number[] = [];
    const kernelSide: number[] = [];
    await Promise.all([
      ...others.map(async (mcp) => {
        for (let i = 0; i < SAMPLES; i++) {
          const t0 = performance.now();
          await mcp.ok("shoal_exec", { src: "echo hi" });
          facades.push(performance.now() - t0);
        }
      }),
      (async () => {
        for (let i = 0; i < SAMPLES; i++) {
          const t0 = performance.now();
          await direct!.request("exec", { src: "echo hi" });
          kernelSide.push(performance.now() - t0);
        }
      })(),
    ]);
    const p50 = (xs: number[]) => percentile(xs.sort((a, b) => a - b), 0.5);
    return { facades: p50(facades), kernel: p50(kernelSide) };
  };
  const before = await latencies();
  const rssBefore = { facade: rssBytes(facade), kernel: rssBytes(kernel) };

  // The exec runs until the client has had progress again after resuming.
  const go = `${box.dir}/go`;
  const longRun = stalled.callTool(
    {
      name: "shoal_exec",
      arguments: { src: `while [ ! -e ${go} ]; do sleep 0.1; done; echo done` },
    },
    undefined,
    { timeout: 300_000, onprogress: () => progress++ },
  );
  transport.pause();
  let lastSeq = -1;
  const flood = (async () => {
    for (let i = 0; i < EVENTS; i++) {
      const r = await direct!.request("events.publish", {
        channel: "user.flood",
        payload: { i, pad: PAYLOAD },
      }) as Rec;
      lastSeq = r.seq as number;
    }
  })();
  const during = await latencies();
  await flood;
  const rssPeak = { facade: rssBytes(facade), kernel: rssBytes(kernel) };
  for (
    const [who, b, d] of [["facades", before.facades, during.facades], [
      "kernel",
      before.kernel,
      during.kernel,
    ]] as const
  ) {
    report.add(
      `${who} exec p50 during stall / before`,
      `≤ ${LATENCY_RATIO}`,
      `${(d / b).toFixed(2)} (${b.toFixed(1)}→${d.toFixed(1)} ms)`,
      d / b <= LATENCY_RATIO,
      load,
    );
  }
  const growth = rssPeak.facade - rssBefore.facade;
  report.add(
    "stalled facade RSS growth",
    `≤ ${FACADE_GROWTH_MIB} MiB`,
    `${mib(growth)} (${mib(rssBefore.facade)}→${mib(rssPeak.facade)})`,
    growth <= FACADE_GROWTH_MIB * 1024 * 1024,
    `${mib(EVENTS * 1024)} published`,
  );
  console.log(`note: kernel RSS ${mib(rssBefore.kernel)}→${mib(rssPeak.kernel)}`);
  const received = updates.length;
  const progressBefore = progress;
  transport.resume();
  await waitUntil(() => progress >= progressBefore + PROGRESS_AFTER_RESUME, 30_000);
  const progressAfter = progress - progressBefore;
  Deno.writeTextFileSync(go, "");
  const result = await longRun.catch((e) => e as Error);
  const caughtUp = await waitUntil(
    () => updates.some((u) => (u.seq as number) >= lastSeq),
    60_000,
  );
  let delivered = 0;
  let dropped = 0;
  const seqs = new Set<unknown>();
  for (const u of updates) {
    const payload = u.payload as Rec;
    if (typeof payload.dropped === "number") dropped += payload.dropped;
    else {
      delivered++;
      seqs.add(u.seq);
    }
  }
  report.add(
    "progress notes after resume",
    `≥ ${PROGRESS_AFTER_RESUME}`,
    `${progressAfter} (${progressBefore} before)`,
    progressAfter >= PROGRESS_AFTER_RESUME,
    load,
  );
  report.add(
    "long exec answered after resume",
    "ok",
    result instanceof Error ? String(result).slice(0, 60) : "ok",
    !(result instanceof Error) && !(result as { isError?: boolean }).isError,
    load,
  );
  report.add(
    "events delivered once + reported dropped",
    `= ${EVENTS}, up to seq ${lastSeq}`,
    `${delivered} + ${dropped} (${received} while stalled)${caughtUp ? "" : ", not caught up"}` +
      (seqs.size < delivered ? `, ${delivered - seqs.size} twice` : ""),
    caughtUp && seqs.size === delivered && delivered + dropped === EVENTS,
    load,
  );
  report.add(
    "stdout lines that are not whole frames",
    "= 0",
    transport.junk.length,
    transport.junk.length === 0,
    load,
  );
} finally {
  direct?.close();
  await stalled.close().catch(() => {});
  await Promise.all(others.map((mcp) => mcp.close().catch(() => {})));
  const kernels = kernelPids(socket);
  for (const pid of kernels) Deno.kill(pid, "SIGTERM");
  await waitUntil(() => !kernels.some(processLive), 10_000);
  await box.cleanup();
  report.finish();
}
