/**
 * Bash's own share of one exec (issue 10), next to the floor it is measured against, all in one
 * run and interleaved so the machine's load hits every row alike: a bare `bash -c true` spawned
 * as the kernel spawns bash, `runBash` cold (spawn..exit) and warm (hand-over..exit), and the warm
 * run split by `EPOCHREALTIME` stamps its source prints to stderr:
 * - hand-over..source start: the FIFO wake-up and the restore; the source sources the restore
 *   script again as the driver does (not when empty) and times it, the wake-up is the rest (it
 *   includes the kernel's hand-over writes and opening the source file);
 * - the source (`echo hi`);
 * - source end..exit seen, split by an xtrace (`set -x`, a `PS4` stamp before each command) the
 *   source leaves on for the driver's EXIT trap: trap entry up to the dump's first write (opening
 *   the state file), each listing builtin (`declare -p`, `declare -f`, `alias -p`, each line of
 *   them one write into the state file) and the whole dump, then bash's `exit` until `runBash`
 *   sees the exit (freeing, reaping, Deno's child status). The traced lines cost a write each.
 * A bare bash's exit..seen (its last stamp to the child status) gives that last stage's floor.
 * The session state holds the process environment plus `--vars` variables and as many functions
 * and aliases. `deno run -A scripts/bench/bash_stages.ts [--runs N] [--vars N]`
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
/**
 * The warm run's source: `echo hi` between two stamps, then the restore script sourced again
 * between two more, all four printed on one stderr line; then the xtrace for the EXIT trap.
 */
const STAMPED = [
  "__b0=$EPOCHREALTIME",
  "echo hi",
  "__b1=$EPOCHREALTIME",
  'builtin [ -s "$__shoal_dir/restore" ] && builtin source "$__shoal_dir/restore"',
  'builtin printf "%s %s %s %s\\n" "$__b0" "$__b1" "$__b1" "$EPOCHREALTIME" >&2',
  "PS4='+$EPOCHREALTIME '",
  "set -x",
].join("\n");
/** The traced commands of the EXIT trap that start a stage, and the stage's label. */
const TRACED: [RegExp, string][] = [
  [/^builtin declare -p$/, "    dump: declare -p"],
  [/^builtin declare -f$/, "    dump: declare -f"],
  [/^builtin alias -p$/, "    dump: alias -p"],
];

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
/** An `EPOCHREALTIME` text in µs. */
const stampUs = (text: string) => Number(text.replace(".", ""));

async function bareSpawn(): Promise<void> {
  const t0 = performance.now();
  const child = spawnGroupLeader([BASH, "--noprofile", "--norc", "-c", "true"], state);
  await Promise.all([child.status, child.stdout.cancel(), child.stderr.cancel()]);
  add("bare spawn: bash -c true", performance.now() - t0);
}

/** A bare bash's last stamp (printed to stderr) until its exit status is seen. */
async function bareExit(): Promise<void> {
  const src = 'printf %s "$EPOCHREALTIME" >&2';
  const child = spawnGroupLeader([BASH, "--noprofile", "--norc", "-c", src], state);
  const stderr = new Response(child.stderr).text();
  await child.status;
  const seen = epochUs();
  await child.stdout.cancel();
  add("bare: last stamp..exit seen", (seen - stampUs(await stderr)) / 1000);
}

/** Adds the EXIT trap's stages from its xtrace lines (`+…+<stamp> <command>`) up to `seen`. */
function addTrapStages(trace: string[], sourceEnd: number, seen: number): void {
  const lines = trace.flatMap((line) => {
    const m = /^\++(\d+\.\d+) (.*)$/.exec(line);
    return m === null ? [] : [{ at: stampUs(m[1]), command: m[2] }];
  });
  const index = (test: RegExp) => lines.findIndex((l) => test.test(l.command));
  const [first, exit] = [index(/^builtin printf 'C/), index(/^builtin exit/)];
  if (first < 0 || exit < first) throw new Error(`no dump traced: ${trace.join("\n")}`);
  add("  source end..dump's first write", (lines[first].at - sourceEnd) / 1000);
  for (const [test, label] of TRACED) {
    const i = index(test);
    if (i >= 0) add(label, (lines[i + 1].at - lines[i].at) / 1000);
  }
  add("    dump: whole", (lines[exit].at - lines[first].at) / 1000);
  add("  exit..exit seen", (seen - lines[exit].at) / 1000);
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
  const [stamps, ...trace] = stderr.text.split("\n");
  const [start, end, restoreStart, restoreEnd] = stamps.split(" ").map(stampUs);
  const restore = (restoreEnd - restoreStart) / 1000;
  add("  hand-over..source start", (start - handOver) / 1000);
  add("    restore (sourced again)", restore);
  add("    FIFO wake-up (the rest)", (start - handOver) / 1000 - restore);
  add("  source (echo hi)", (end - start) / 1000);
  add("  source end..exit seen", (seen - restoreEnd) / 1000);
  addTrapStages(trace, restoreEnd, seen);
}

try {
  for (let i = 0; i < 5; i++) {
    await bareSpawn();
    await bareExit();
    await run(false);
    await run(true);
  }
  rows.clear();
  for (let i = 0; i < RUNS; i++) {
    await bareSpawn();
    await bareExit();
    await run(false);
    await run(true);
  }
  console.log(`bash stages, ${RUNS} runs each, ${VARS} vars/functions/aliases in the state (ms)`);
  console.log("stage                                p50      p95  p50/bare");
  const bare = percentile(rows.get("bare spawn: bash -c true")!.sort((a, b) => a - b), 0.5);
  for (const [label, samples] of rows) {
    samples.sort((a, b) => a - b);
    const p50 = percentile(samples, 0.5);
    console.log(
      `${label.padEnd(34)} ${p50.toFixed(3).padStart(7)}  ` +
        `${percentile(samples, 0.95).toFixed(3).padStart(7)}  ${
          (p50 / bare).toFixed(2).padStart(7)
        }`,
    );
  }
} finally {
  scratch.clear();
  await Deno.remove(dir, { recursive: true });
}
