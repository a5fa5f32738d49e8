// Benchmark: responsiveness while one connection's source is analysed (E-4: other connections are
// answered within 100 ms however long one request's parsing, effect analysis and rendering take).
// For each big source, one connection sends it while a second connection sends small `parse`
// pings (`echo ping`) back to back; prints the pings' p50/p95/p99/max latency, the big request's
// duration and outcome, and whether p99 met the 100 ms bound. The sources, 1 MiB and 9 MiB each:
// `explain` of `:` lines (parse + effect analysis + AST rendering; 9 MiB is past the parse budget,
// so it ends in -32001 after the parser has worked to the budget), `explain` of one word `echo…`
// with no space (issue 34's source), and `exec` of that word in plan mode (analysis, plan store).
// The first source runs twice with the kernel's RSS printed before, after the first run and after
// the second (the analysis worker's memory is given back, so it must not grow from run to run).
//
// Run:  deno run -A scripts/bench/parse_stall.ts [--load N] [--rounds R]
//   --load N    N busy-loop processes (`sh -c 'while :; do :; done'`) burn CPU for the whole run,
//               to measure under load; they are killed (by pid) at the end. Default 0: quiet.
//   --rounds R  each source is sent R times, the pings of all rounds pooled. Default 1.
// Print `uptime` next to the figures.
import { parseArgs } from "node:util";
import { startKernel } from "../../tests/_support/kernel.ts";
import { kernelPid, rssBytes } from "../../tests/_support/proc.ts";
import type { RpcConnection } from "../../src/protocol/rpc_client.ts";
import { percentile } from "./percentile.ts";

const MIB = 1024 * 1024;
/** E-4's bound on how long other connections may wait, in ms. */
const BOUND_MS = 100;

/** One big request: its name, method and params. */
interface Heavy {
  name: string;
  method: string;
  params: Record<string, unknown>;
}

function heavies(): Heavy[] {
  const out: Heavy[] = [];
  for (const mib of [1, 9]) {
    const lines = ":\n".repeat(mib * MIB / 2);
    const word = "echo" + "x".repeat(mib * MIB - 4);
    out.push(
      { name: `explain ${mib} MiB of ':' lines`, method: "explain", params: { src: lines } },
      { name: `explain ${mib} MiB one word`, method: "explain", params: { src: word } },
      { name: `plan ${mib} MiB one word`, method: "exec", params: { src: word, mode: "plan" } },
    );
  }
  return out;
}

function mib(bytes: number): string {
  return (bytes / MIB).toFixed(0);
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
    if (last - now < MIB) return now;
    last = now;
  }
  return last;
}

/** Sends `heavy` `rounds` times with pings alongside; prints its figures. */
async function run(
  heavy: Heavy,
  rounds: number,
  big: RpcConnection,
  pinger: RpcConnection,
): Promise<void> {
  const latencies: number[] = [];
  const durations: number[] = [];
  const outcomes = new Set<string>();
  for (let round = 0; round < rounds; round++) {
    const t0 = performance.now();
    let done = false;
    const request = big.request(heavy.method, heavy.params)
      .then(() => outcomes.add("ok"))
      .catch((e) => outcomes.add(`error: ${e instanceof Error ? e.message : e}`.slice(0, 80)))
      .finally(() => done = true);
    while (!done) {
      const s = performance.now();
      await pinger.request("parse", { src: "echo ping" });
      latencies.push(performance.now() - s);
    }
    await request;
    durations.push(performance.now() - t0);
  }
  latencies.sort((a, b) => a - b);
  const p99 = percentile(latencies, 0.99);
  const ms = (x: number) => x.toFixed(1).padStart(6);
  console.log(
    `${heavy.name.padEnd(32)} ${durations.map((d) => d.toFixed(0)).join("/").padStart(11)} ms  ` +
      `pings n=${String(latencies.length).padStart(5)} p50=${ms(percentile(latencies, 0.5))} ` +
      `p95=${ms(percentile(latencies, 0.95))} p99=${ms(p99)} ` +
      `max=${ms(latencies[latencies.length - 1])} ms  ${p99 <= BOUND_MS ? "met" : "MISSED"}  ` +
      [...outcomes].join(", "),
  );
}

/** Starts `n` CPU-burning processes. */
function startLoad(n: number): Deno.ChildProcess[] {
  return Array.from({ length: n }, () =>
    new Deno.Command("sh", {
      args: ["-c", "while :; do :; done"],
      stdin: "null",
      stdout: "null",
      stderr: "null",
    }).spawn());
}

const { values } = parseArgs({
  args: Deno.args,
  options: { load: { type: "string", default: "0" }, rounds: { type: "string", default: "1" } },
});
const load = startLoad(Number(values.load));
const k = await startKernel();
try {
  const pid = kernelPid(k.socket);
  const big = await k.attach("big");
  const pinger = await k.attach("ping");
  for (let i = 0; i < 20; i++) await pinger.request("parse", { src: "echo warm" });
  console.log(
    `load: ${load.length} busy loops; load average ${Deno.loadavg().map((x) => x.toFixed(2))}`,
  );
  console.log(`E-4 bound: p99 of pings on another connection <= ${BOUND_MS} ms`);
  const [first, ...rest] = heavies();
  const rounds = Number(values.rounds);
  const before = rssBytes(pid);
  await run(first, rounds, big, pinger);
  const firstAtReply = rssBytes(pid);
  const firstSettled = await settledRss(pid);
  await run(first, rounds, big, pinger);
  const secondAtReply = rssBytes(pid);
  const secondSettled = await settledRss(pid);
  console.log(
    `kernel RSS: ${mib(before)} MiB before; after run 1 ${mib(firstAtReply)} MiB at the reply, ` +
      `${mib(firstSettled)} MiB settled (${(firstSettled / before).toFixed(2)}x); after run 2 ${
        mib(secondAtReply)
      } MiB at the reply, ${mib(secondSettled)} MiB settled (${
        (secondSettled / before).toFixed(2)
      }x)`,
  );
  for (const heavy of rest) await run(heavy, rounds, big, pinger);
} finally {
  await k.cleanup();
  for (const child of load) {
    child.kill("SIGKILL");
    await child.status;
  }
}
