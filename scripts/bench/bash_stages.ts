/**
 * Bash's own share of one exec (issue 10), next to the floor it is measured against, all in one
 * run and interleaved so the machine's load hits every row alike: a bare `bash -c true` spawned
 * as the kernel spawns bash, `runBash` cold (spawn..exit) and warm (hand-over..exit), and the warm
 * run split by timestamps its source prints to stderr: hand-over..source start (FIFO wake-up and
 * restore), the source, source end..exit seen (state dump, exit, reaping). The session state
 * holds the process environment plus `--vars` variables and as many functions and aliases.
 * `deno run -A scripts/bench/bash_stages.ts [--runs N] [--vars N]`
 */
import { parseArgs } from "node:util";
import { spawnGroupLeader } from "../../src/kernel/bash/group_leader.ts";
import { type ByteSink, runBash } from "../../src/kernel/bash/run.ts";
import { ScratchPool } from "../../src/kernel/bash/scratch_pool.ts";
import {
  bashOwnVariables,
  cloneState,
  type ShellState,
} from "../../src/kernel/bash/shell_state.ts";
import { WarmShell } from "../../src/kernel/bash/warm_shell.ts";
import { percentile } from "./percentile.ts";

const { values } = parseArgs({
  options: { runs: { type: "string", default: "100" }, vars: { type: "string", default: "0" } },
});
const RUNS = Number(values.runs);
const VARS = Number(values.vars);
const BASH = "/bin/bash";
/** The warm run's source: `echo hi` between two timestamps on stderr. */
const STAMPED = 'printf "%s " "$EPOCHREALTIME" >&2; echo hi; printf "%s" "$EPOCHREALTIME" >&2';

/** A sink keeping what is written to it as text. */
class TextSink implements ByteSink {
  text = "";
  write(chunk: Uint8Array): Promise<void> {
    this.text += new TextDecoder().decode(chunk);
    return Promise.resolve();
  }
}

const dir = await Deno.makeTempDir({ prefix: "shoal-bash-stages-" });
const scratch = new ScratchPool(dir);
const bashVariables = bashOwnVariables(BASH);
const state: ShellState = {
  cwd: dir,
  env: new Map(Object.entries(Deno.env.toObject())),
  vars: new Map(),
  funcs: new Map(),
  aliases: new Map(),
};
for (let i = 0; i < VARS; i++) {
  state.vars.set(`v${i}`, `declare -- v${i}="value ${i}"`);
  state.funcs.set(`f${i}`, `f${i} () \n{ \n    echo ${i}\n}`);
  state.aliases.set(`a${i}`, `alias a${i}='echo ${i}'`);
}
const rows = new Map<string, number[]>();
function add(label: string, ms: number): void {
  rows.set(label, [...rows.get(label) ?? [], ms]);
}
/** Now, in µs since the epoch: the clock of bash's `EPOCHREALTIME`. */
const epochUs = () => (performance.timeOrigin + performance.now()) * 1000;

async function bareSpawn(): Promise<void> {
  const t0 = performance.now();
  const child = spawnGroupLeader([BASH, "--noprofile", "--norc", "-c", "true"], state);
  await Promise.all([child.status, child.stdout.cancel(), child.stderr.cancel()]);
  add("bare spawn: bash -c true", performance.now() - t0);
}

async function run(warm: boolean): Promise<void> {
  let shell: WarmShell | null = null;
  if (warm) {
    shell = WarmShell.prepare(BASH, bashVariables, cloneState(state), null, scratch);
    await new Promise((resolve) => setTimeout(resolve, 100)); // blocked on its FIFO by then
  }
  const stderr = new TextSink();
  const handOver = epochUs();
  const exit = await runBash({
    bash: BASH,
    bashVariables,
    src: warm ? STAMPED : "echo hi",
    state: cloneState(state),
    scratch,
    warm: shell,
    stdout: new TextSink(),
    stderr,
    sandbox: null,
  });
  const seen = handOver + Number(exit.durNs) / 1000;
  if (exit.final === null) throw new Error(`no state captured: ${stderr.text}`);
  if (!warm) return add("cold: spawn..exit (dur_ns)", Number(exit.durNs) / 1e6);
  add("warm: hand-over..exit (dur_ns)", Number(exit.durNs) / 1e6);
  const [start, end] = stderr.text.split(" ").map((s) => Number(s.replace(".", "")));
  add("  hand-over..source start", (start - handOver) / 1000);
  add("  source (echo hi)", (end - start) / 1000);
  add("  source end..exit seen", (seen - end) / 1000);
}

try {
  for (let i = 0; i < 5; i++) {
    await bareSpawn();
    await run(false);
    await run(true);
  }
  rows.clear();
  for (let i = 0; i < RUNS; i++) {
    await bareSpawn();
    await run(false);
    await run(true);
  }
  console.log(`bash stages, ${RUNS} runs each, ${VARS} vars/functions/aliases in the state (ms)`);
  console.log("stage                              p50      p95  p50/bare");
  const bare = percentile(rows.get("bare spawn: bash -c true")!.sort((a, b) => a - b), 0.5);
  for (const [label, samples] of rows) {
    samples.sort((a, b) => a - b);
    const p50 = percentile(samples, 0.5);
    console.log(
      `${label.padEnd(32)} ${p50.toFixed(3).padStart(7)}  ` +
        `${percentile(samples, 0.95).toFixed(3).padStart(7)}  ${
          (p50 / bare).toFixed(2).padStart(7)
        }`,
    );
  }
} finally {
  scratch.clear();
  await Deno.remove(dir, { recursive: true });
}
