// Benchmark: responsiveness while one connection's source is analysed (E-4).
// One connection sends `explain` of a 1 MB source of 500,000 `:` lines (parse + effect analysis);
// while it runs, a second connection sends small `parse` pings back to back. Prints the pings'
// p50/p95/p99/max latency, the big request's duration and outcome, and the kernel's RSS before,
// after the first run and after a second identical run (the analysis worker's memory is given back,
// so it must not grow from run to run). E-4 asks for pings answered within 100 ms (p99) however
// long the big request takes.
// Run: deno run -A scripts/bench/parse_stall.ts
import { startKernel } from "../../tests/_support/kernel.ts";
import { kernelPid, rssBytes } from "../../tests/_support/proc.ts";
import type { RpcConnection } from "../../src/protocol/rpc_client.ts";

const LINES = 500_000;

function percentile(sorted: number[], p: number): string {
  return sorted[Math.max(0, Math.ceil(p * sorted.length) - 1)].toFixed(1);
}

function mib(bytes: number): string {
  return (bytes / 2 ** 20).toFixed(0);
}

/**
 * The kernel's RSS once it stops falling (a retired analysis worker ends asynchronously, and its
 * heap goes back to the system when its thread has ended), sampled every 250 ms for at most 10 s.
 */
async function settledRss(pid: number): Promise<number> {
  let last = rssBytes(pid);
  for (let i = 0; i < 40; i++) {
    await new Promise((resolve) => setTimeout(resolve, 250));
    const now = rssBytes(pid);
    if (last - now < 2 ** 20) return now;
    last = now;
  }
  return last;
}

/** One `explain` of the big source with pings alongside; prints its figures. */
async function run(big: RpcConnection, pinger: RpcConnection): Promise<void> {
  const t0 = performance.now();
  let done = false;
  let outcome = "ok";
  const heavy = big.request("explain", { src: ":\n".repeat(LINES) })
    .catch((e) => outcome = `error: ${e instanceof Error ? e.message : e}`)
    .finally(() => done = true);
  const latencies: number[] = [];
  while (!done) {
    const s = performance.now();
    await pinger.request("parse", { src: "echo ping" });
    latencies.push(performance.now() - s);
  }
  await heavy;
  const heavyMs = performance.now() - t0;
  latencies.sort((a, b) => a - b);
  console.log(
    `explain of ${LINES} ':' lines (${(2 * LINES / 1e6).toFixed(1)} MB): ${
      heavyMs.toFixed(0)
    } ms, ${outcome.slice(0, 120)}`,
  );
  console.log(
    `parse pings meanwhile: n=${latencies.length} p50=${percentile(latencies, 0.5)} ms ` +
      `p95=${percentile(latencies, 0.95)} ms p99=${percentile(latencies, 0.99)} ms ` +
      `max=${latencies[latencies.length - 1].toFixed(1)} ms`,
  );
}

const k = await startKernel();
try {
  const pid = kernelPid(k.socket);
  const big = await k.attach("big");
  const pinger = await k.attach("ping");
  for (let i = 0; i < 20; i++) await pinger.request("parse", { src: "echo warm" });
  const before = rssBytes(pid);
  await run(big, pinger);
  const firstAtReply = rssBytes(pid);
  const first = await settledRss(pid);
  await run(big, pinger);
  const secondAtReply = rssBytes(pid);
  const second = await settledRss(pid);
  console.log(
    `kernel RSS: ${mib(before)} MiB before; after run 1 ${mib(firstAtReply)} MiB at the reply, ` +
      `${mib(first)} MiB settled (${(first / before).toFixed(2)}x); after run 2 ${
        mib(secondAtReply)
      } MiB at the reply, ${mib(second)} MiB settled (${(second / before).toFixed(2)}x)`,
  );
} finally {
  await k.cleanup();
}
