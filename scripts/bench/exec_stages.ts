/**
 * Where one exec's time goes (issue 10): the stages of `exec/run_source.ts` called one by one on
 * the real modules (CAS, SQLite journal, bash), in process, p50/p95 over many `echo hi` runs, so
 * every change to the hot path is measured, not guessed. Runs take turns between a cold spawn, a
 * warm shell that is ready (spawned 100 ms before), and one spawned just before the hand-over (a
 * back-to-back exec whose shell is still starting). Bash's own time is split at its first output:
 * before it, the wake-up, restore and source; after it, the state dump and the exit. The socket
 * and facade hops are in `exec_latency.ts`, which splits each exec into bash and the rest.
 */
import { bashOwnVariables, cloneState, diffState } from "../../src/kernel/bash/shell_state.ts";
import { runBash } from "../../src/kernel/shells/run.ts";
import { Journal } from "../../src/kernel/journal/journal.ts";
import { CaptureSink } from "../../src/kernel/store/capture.ts";
import { Cas } from "../../src/kernel/store/cas.ts";
import { ScratchPool } from "../../src/kernel/bash/scratch_pool.ts";
import { WarmShell } from "../../src/kernel/shells/warm_shell.ts";
import { outcomeValue } from "../../src/kernel/values/outcome.ts";
import { renderBounded } from "../../src/kernel/values/render.ts";
import { printStages } from "./percentile.ts";

const N = 300; // a third each: cold, warm and ready, warm and just spawned
const KINDS = ["cold", "warm", "fresh"] as const;
type Kind = typeof KINDS[number];
const BASH = "/bin/bash";
const encoder = new TextEncoder();

const dir = await Deno.makeTempDir({ prefix: "shoal-stages-" });
const cas = await Cas.open(dir);
const journal = Journal.open(dir);
const bashVariables = await bashOwnVariables(BASH);
const scratch = new ScratchPool(cas.tmpDir);
const state = {
  cwd: dir,
  env: new Map(Object.entries(Deno.env.toObject())),
  vars: new Map<string, string>(),
  funcs: new Map<string, string>(),
  aliases: new Map<string, string>(),
};
const stages = new Map<string, number[]>();

async function stage<T>(name: string, work: () => Promise<T> | T): Promise<T> {
  const t0 = performance.now();
  const result = await work();
  const list = stages.get(name) ?? [];
  list.push(performance.now() - t0);
  stages.set(name, list);
  return result;
}

function sample(name: string, ms: number): void {
  const list = stages.get(name) ?? [];
  list.push(ms);
  stages.set(name, list);
}

/**
 * One exec; `warm` runs it in a warm shell prepared (outside the timed stages) 100 ms before,
 * `fresh` in one spawned just before.
 */
async function oneExec(kind: Kind): Promise<void> {
  const warm = kind !== "cold";
  let shell: WarmShell | null = null;
  if (warm) {
    shell = WarmShell.prepare(BASH, bashVariables, cloneState(state), null, scratch);
    // ready: blocked on its FIFO by then
    if (kind === "warm") await new Promise((resolve) => setTimeout(resolve, 100));
  }
  let firstOutput = 0;
  const t0 = performance.now();
  const snapshot = await stage("snapshot", () => cloneState(state));
  const [stdout, stderr] = await stage(
    "capture open x2",
    () => Promise.all([CaptureSink.open(cas), CaptureSink.open(cas)]),
  );
  const id = await stage("journal start", () =>
    journal.start({
      session: "bench",
      principal: "uid:0",
      ts_ns: 0n,
      cwd: encoder.encode(snapshot.cwd),
      src: "echo hi",
      effects: [],
    }));
  const handedOver = performance.now();
  const exit = await stage(`bash run, ${kind} (start..dump)`, () =>
    runBash({
      bash: BASH,
      bashVariables,
      src: "echo hi",
      state: snapshot,
      scratch,
      warm: shell,
      stdout: {
        write: (chunk) => {
          firstOutput ||= performance.now();
          return stdout.write(chunk);
        },
      },
      stderr,
      sandbox: null,
    }));
  const bashMs = Number(exit.durNs) / 1e6;
  sample(`  ${kind}: start..exit (dur_ns)`, bashMs);
  sample(`  ${kind}: start..first output`, firstOutput - handedOver);
  sample(`  ${kind}: first output..exit`, bashMs - (firstOutput - handedOver));
  const [out, err] = await stage(
    "capture finish x2",
    () => Promise.all([stdout.finish(), stderr.finish()]),
  );
  const outcome = await stage("outcome value", () =>
    outcomeValue(cas, {
      status: exit.status,
      signal: exit.signal,
      out,
      err,
      dur_ns: Number(exit.durNs),
      pid: exit.pid,
      cmd: "echo hi",
    }));
  await stage("state diff", () => diffState(snapshot, exit.final!));
  const bounded = await stage("render", () => renderBounded(outcome, "shoal://out/1", true));
  const renderHash = await stage("render CAS put", () => cas.put(encoder.encode(bounded)));
  await stage("journal finish", () =>
    journal.finish(id, {
      dur_ns: exit.durNs,
      status: exit.status,
      ok: true,
      outputs: [
        { kind: "stdout", hash: out.blob.hash, len: out.blob.len },
        { kind: "render", hash: renderHash, len: bounded.length },
      ],
    }));
  await stage("render (event)", () => renderBounded(outcome, "shoal://out/1", false, 4096));
  sample(`TOTAL, ${kind}`, performance.now() - t0);
}

try {
  for (let i = 0; i < 30; i++) await oneExec(KINDS[i % 3]);
  stages.clear();
  for (let i = 0; i < N; i++) await oneExec(KINDS[i % 3]);
  printStages(`exec stages, in process, ${N} runs of \`echo hi\` (ms)`, stages);
} finally {
  scratch.clear();
  journal.close();
  await Deno.remove(dir, { recursive: true });
}
