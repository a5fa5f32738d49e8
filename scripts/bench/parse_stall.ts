// Benchmark: responsiveness while one connection's source is analysed (E-4).
// One connection sends `explain` of a 1 MB source of 500,000 `:` lines (parse + effect analysis);
// while it runs, a second connection sends small `parse` pings back to back. Prints the pings'
// p50/p95/p99/max latency, the big request's duration and the kernel's RSS before and after.
// E-4 asks for pings answered within 100 ms (p99) however long the big request takes.
// Run: deno run -A scripts/bench/parse_stall.ts
import { startKernel } from "../../tests/_support/kernel.ts";
import { kernelPid, rssBytes } from "../../tests/_support/proc.ts";

const LINES = 500_000;

function percentile(sorted: number[], p: number): string {
  return sorted[Math.max(0, Math.ceil(p * sorted.length) - 1)].toFixed(1);
}

const k = await startKernel();
try {
  const pid = kernelPid(k.socket);
  const big = await k.attach("big");
  const pinger = await k.attach("ping");
  for (let i = 0; i < 20; i++) await pinger.request("parse", { src: "echo warm" });
  const rssBefore = rssBytes(pid);
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
  const rssAfter = rssBytes(pid);
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
  console.log(
    `kernel RSS: ${(rssBefore / 2 ** 20).toFixed(0)} MiB before, ${
      (rssAfter / 2 ** 20).toFixed(0)
    } MiB after`,
  );
} finally {
  await k.cleanup();
}
