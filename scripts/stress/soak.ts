/**
 * Soak (issue 13): N execs (default 10,000) through one facade — the MCP SDK client over stdio
 * to `bin/shoal-mcp`, which autostarts the kernel — after a warm-up of 1,500 execs. Prints the
 * RSS curve of kernel and facade, the growth of their low-water RSS from the first to the last
 * quarter after warm-up (≤ 10 %), their open fds (flat), journal rows (= every exec), spool
 * orphans under `tmp/` and CAS blobs that do not hash to their name (none), the orphans after
 * the kernel's shutdown (none), and the exec p50 of the first and last tenth for comparison.
 *
 * RSS at one instant is wherever V8's garbage-collection sawtooth happens to be: under load the
 * kernel swung 113→144→113 MiB within 3,000 execs while its heap after a forced GC stayed at
 * 19 MiB. The lowest of the 10 samples in a quarter is the memory kept across collections, so
 * a leak shows as a rising low water while a late collection does not.
 *
 *   deno run -A scripts/stress/soak.ts [--execs N] [--parallel P]
 */
import { connectMcp } from "../../tests/e2e/_mcp.ts";
import { kernelPid, openFds, processLive, rssBytes } from "../../tests/_support/proc.ts";
import { sandbox } from "../../tests/_support/sandbox.ts";
import { waitUntil } from "../../tests/_support/wait.ts";
import { percentile } from "../bench/percentile.ts";
import { intFlag, mib, Report } from "./report.ts";
import { casFacts, journalFacts, spoolOrphans } from "./state_facts.ts";

const EXECS = intFlag(Deno.args, "execs", 10_000);
const PARALLEL = intFlag(Deno.args, "parallel", 4);
/**
 * Warm-up execs: enough to fill what the kernel keeps by design — 1,000 transcript values per
 * session, 1,024 events per static channel, the events of 256 + 256 recent tasks.
 */
const WARMUP = 1500;
/** RSS samples after warm-up, four quarters of ten; fds are counted at every fourth. */
const SAMPLES = 40;

const box = await sandbox();
const state = `${box.dir}/state/shoal`;
const report = new Report(`soak: ${EXECS} execs through one facade, ${PARALLEL} in flight`);
const mcp = await connectMcp(box);
let kernel = 0;
try {
  let next = 0;
  let errors = 0;
  const latencies: number[] = [];
  /** Runs execs `from`..`to`-1 with PARALLEL workers, each checking its own output. */
  const run = async (to: number) => {
    const worker = async () => {
      while (next < to) {
        const i = next++;
        const t0 = performance.now();
        const reply = await mcp.call("shoal_exec", { src: `echo soak-${i}` });
        latencies[i] = performance.now() - t0;
        if (reply.isError || !JSON.stringify(reply.structuredContent).includes(`soak-${i}\\n`)) {
          if (errors++ < 3) console.log(`exec ${i}: ${JSON.stringify(reply).slice(0, 300)}`);
        }
      }
    };
    await Promise.all(Array.from({ length: PARALLEL }, worker));
  };
  await run(WARMUP);
  kernel = kernelPid(box.socket());
  const pids = { kernel, facade: mcp.pid };
  const sample = () => ({
    kernel: { rss: rssBytes(pids.kernel), fds: openFds(pids.kernel) },
    facade: { rss: rssBytes(pids.facade), fds: openFds(pids.facade) },
  });
  const base = sample();
  const peak = structuredClone(base);
  const curve = { kernel: [base.kernel.rss], facade: [base.facade.rss] };
  for (let s = 1; s <= SAMPLES; s++) {
    await run(WARMUP + Math.round((EXECS * s) / SAMPLES));
    const now = { kernel: rssBytes(pids.kernel), facade: rssBytes(pids.facade) };
    for (const who of ["kernel", "facade"] as const) {
      curve[who].push(now[who]);
      peak[who].rss = Math.max(peak[who].rss, now[who]);
    }
    if (s % 4 !== 0) continue;
    const fds = { kernel: openFds(pids.kernel), facade: openFds(pids.facade) };
    for (const who of ["kernel", "facade"] as const) {
      peak[who].fds = Math.max(peak[who].fds, fds[who]);
    }
    console.log(
      `  ${next - WARMUP} execs: kernel ${mib(now.kernel)} ${fds.kernel} fds, ` +
        `facade ${mib(now.facade)} ${fds.facade} fds`,
    );
  }
  const end = sample();
  const load = `${EXECS} execs after ${WARMUP} warm-up`;
  const quarter = SAMPLES / 4;
  for (const who of ["kernel", "facade"] as const) {
    const first = Math.min(...curve[who].slice(0, quarter + 1));
    const last = Math.min(...curve[who].slice(-quarter));
    const growth = (last - first) / first;
    report.add(
      `${who} low-water RSS growth, quarter 1→4`,
      "≤ 10 %",
      `${(growth * 100).toFixed(1)} % (${mib(first)}→${mib(last)})`,
      growth <= 0.10,
      load,
    );
    console.log(
      `note: ${who} RSS after warm-up ${mib(base[who].rss)}, end ${mib(end[who].rss)}, ` +
        `peak ${mib(peak[who].rss)}; every ${EXECS / SAMPLES} execs: ` +
        curve[who].map((b) => (b / 2 ** 20).toFixed(0)).join(" "),
    );
    report.add(
      `${who} open fds start→end (peak)`,
      "end = start",
      `${base[who].fds}→${end[who].fds} (${peak[who].fds})`,
      end[who].fds <= base[who].fds,
      load,
    );
  }
  report.add("exec errors", "0", errors, errors === 0, load);
  const journal = journalFacts(state);
  report.add(
    "journal rows (finished)",
    `= ${WARMUP + EXECS}`,
    `${journal.rows} (${journal.finished})`,
    journal.rows === WARMUP + EXECS && journal.finished === journal.rows,
    `${EXECS} execs + ${WARMUP} warm-up`,
  );
  const orphans = spoolOrphans(state);
  report.add(
    "spool orphans in tmp/ (kernel idle)",
    "0",
    orphans.length,
    orphans.length === 0,
    load,
  );
  const cas = casFacts(state);
  report.add(
    `CAS blobs not matching their hash`,
    "0",
    `${cas.bad.length} of ${cas.blobs}`,
    cas.bad.length === 0,
    load,
  );
  const tenth = Math.max(1, Math.floor(EXECS / 10));
  const p50 = (xs: number[]) => percentile(xs.sort((a, b) => a - b), 0.5);
  const first = p50(latencies.slice(WARMUP, WARMUP + tenth));
  const last = p50(latencies.slice(-tenth));
  console.log(
    `note: exec p50 first tenth ${first.toFixed(2)} ms, last tenth ${last.toFixed(2)} ms ` +
      `(ratio ${(last / first).toFixed(2)})`,
  );
  await mcp.close();
  Deno.kill(kernel, "SIGTERM");
  const stopped = await waitUntil(() => !processLive(kernel), 10000);
  const left = spoolOrphans(state, true);
  report.add(
    "tmp/ entries after kernel shutdown",
    "0",
    stopped ? left.length : "kernel did not stop",
    stopped && left.length === 0,
    load,
  );
} finally {
  await mcp.close().catch(() => {});
  if (kernel !== 0 && processLive(kernel)) Deno.kill(kernel, "SIGKILL");
  await box.cleanup();
  report.finish();
}
