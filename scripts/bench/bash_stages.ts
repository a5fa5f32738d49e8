/**
 * Bash's own share of one exec (issue 10), next to the floor it is measured against, all in one
 * run and interleaved so the machine's load hits every row alike: a bare `bash -c true` spawned
 * as the kernel spawns bash, `runBash` cold (spawn..exit) and warm (hand-over..exit), and the warm
 * run split by `EPOCHREALTIME` stamps its source prints to stderr:
 * - hand-over..source start: the FIFO wake-up and the restore; the source sources the restore
 *   script again as the driver does (not when empty) and times it, the wake-up is the rest (it
 *   includes the kernel's hand-over writes and opening the source file);
 * - the source (`echo hi`);
 * - source end..exit seen: the driver's EXIT trap (its state dump) and bash's `exit` until
 *   `runBash` sees the exit (freeing, reaping, Deno's child status). The dump turns xtrace off
 *   (K-BASH-4), so it is timed as the source runs the dump's listings once more, each stamped
 *   (`declare -p`, `declare -f`, `alias -p` into a file of the scratch directory, as the dump
 *   writes its state file); the rest of that stage is the exit and its reaping.
 * A bare bash's exit..seen (its last stamp to the child status) gives that last stage's floor, as
 * the kernel reaps it (on Linux a waitpid on a worker thread) and as Deno does.
 * The session state holds the process environment plus `--vars` variables and as many functions
 * and aliases.
 *
 * Then a warm shell's spawn..ready, the time a back-to-back exec may wait for the shell spawned at
 * the previous hand-over, split by timestamps its driver prints to stderr: the `spawn()` call
 * (the event loop is blocked meanwhile), spawn..first driver command (bash's exec and start:
 * environment import, locale), and the driver's setup up to the `go` FIFO read.
 * Bare `bash -c` spawns, as the kernel spawns them (posix_spawn through FFI on Linux), by Deno with
 * the same options and by Deno through setsid(1) as the kernel spawned before (the difference to
 * Deno alone is the setsid(1) exec), give spawn..exit of `bash -c true` and spawn..first command.
 * `deno run -A scripts/bench/bash_stages.ts [--runs N] [--vars N]`
 */
import { parseArgs } from "node:util";
import type { BashChild } from "../../src/kernel/bash/bash_child.ts";
import { spawnGroupLeader, spawnOptions } from "../../src/kernel/bash/group_leader.ts";
import { mkfifo } from "../../src/kernel/bash/mkfifo.ts";
import { type ByteSink, runBash } from "../../src/kernel/shells/run.ts";
import { spawnDriver } from "../../src/kernel/shells/spawn.ts";
import { ScratchPool } from "../../src/kernel/bash/scratch_pool.ts";
import {
  bashOwnVariables,
  cloneState,
  type ShellState,
  WARM_DRIVER,
} from "../../src/kernel/bash/shell_state.ts";
import { WarmShell } from "../../src/kernel/shells/warm_shell.ts";
import { percentile } from "./percentile.ts";

const { values } = parseArgs({
  options: { runs: { type: "string", default: "100" }, vars: { type: "string", default: "0" } },
});
const RUNS = Number(values.runs);
const VARS = Number(values.vars);
const BASH = "/bin/bash";
/**
 * The warm run's source: `echo hi` between two stamps, then the restore script sourced again
 * between two more, then the dump's listings run once more, a stamp after each: all seven
 * printed on one stderr line.
 */
const STAMPED = [
  "__b0=$EPOCHREALTIME",
  "echo hi",
  "__b1=$EPOCHREALTIME",
  'builtin [ -s "$__shoal_dir/restore" ] && builtin source "$__shoal_dir/restore"',
  "__b2=$EPOCHREALTIME",
  "{ builtin declare -p; __b3=$EPOCHREALTIME; builtin declare -f; __b4=$EPOCHREALTIME;",
  '  builtin alias -p; } 1<>"$__shoal_dir/dump_copy"',
  'builtin printf "%s %s %s %s %s %s %s\\n" "$__b0" "$__b1" "$__b1" "$__b2" "$__b3" "$__b4" \\',
  '  "$EPOCHREALTIME" >&2',
].join("\n");

/** A driver line printing `label` and the time to stderr. */
const stamp = (label: string) => `builtin printf '${label} %s\\n' "$EPOCHREALTIME" >&2\n`;
/** The warm shell's driver, stamped when it starts and when it is about to read its FIFO. */
const STAMPED_WARM = stamp("start") +
  WARM_DRIVER.replace("builtin read -r __shoal_go", stamp("ready") + "builtin read -r __shoal_go");
if (!STAMPED_WARM.includes("ready")) throw new Error("the warm driver reads its FIFO elsewhere");

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
const bashVariables = await bashOwnVariables(BASH);
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

/** How a bare bash is spawned: as the kernel spawns, by Deno alone, by Deno through setsid(1). */
type How = "kernel" | "deno" | "setsid";
const HOW: Record<How, string> = {
  kernel: "as the kernel spawns",
  deno: "Deno spawn",
  setsid: "Deno + setsid(1)",
};

/** A bare `bash -c src` spawned `how`, with the kernel's options. */
function spawnBare(how: How, src: string): BashChild {
  const argv = [BASH, "--noprofile", "--norc", "-c", src];
  if (how === "kernel") return spawnGroupLeader(argv, state);
  const [cmd, args] = how === "deno" ? [BASH, argv.slice(1)] : ["setsid", argv];
  return new Deno.Command(cmd, { ...spawnOptions(state), args }).spawn();
}

/** A bare `bash -c true` from its spawn until its exit and EOFs are seen. */
async function bareSpawn(how: How): Promise<void> {
  const t0 = performance.now();
  const child = spawnBare(how, "true");
  await Promise.all([child.status, child.stdout.cancel(), child.stderr.cancel()]);
  add(
    how === "kernel" ? "bare spawn: bash -c true" : `bare spawn ${HOW[how]}`,
    performance.now() - t0,
  );
}

/** A bare bash's last stamp (printed to stderr) until its exit status is seen. */
async function bareExit(how: How): Promise<void> {
  const child = spawnBare(how, 'printf %s "$EPOCHREALTIME" >&2');
  const stderr = new Response(child.stderr).text();
  await child.status;
  const seen = epochUs();
  await child.stdout.cancel();
  add(`bare ${HOW[how]}: last stamp..exit seen`, (seen - stampUs(await stderr)) / 1000);
}

/** The times (µs since the epoch) a process printed with {@link stamp}, by label. */
function stamps(stderr: Uint8Array): Map<string, number> {
  const text = new TextDecoder().decode(stderr);
  return new Map(
    [...text.matchAll(/^(\w+) (\d+)\.(\d+)$/gm)].map((m) => [m[1], Number(m[2] + m[3])]),
  );
}

/** A bare `bash -c` spawned `how`, printing when its first command runs. */
async function bareFirstCommand(how: How): Promise<void> {
  const t0 = epochUs();
  const child = spawnBare(how, stamp("start"));
  const [, stderr] = await Promise.all([
    child.stdout.cancel(),
    new Response(child.stderr).bytes(),
    child.status,
  ]);
  add(`bare ${HOW[how]}: spawn..1st command`, (stamps(stderr).get("start")! - t0) / 1000);
}

/**
 * A warm shell's spawn..ready, as `WarmShell.prepare` spawns it: its scratch directory's `go`
 * FIFO, held open read-write, gets a line that is not `run`, so the shell exits once it reads it.
 */
async function warmSpawn(): Promise<void> {
  const dir = scratch.acquire();
  const fifo = `${dir}/go`;
  try {
    Deno.statSync(fifo);
  } catch {
    if (!mkfifo(fifo, 0o600)) throw new Error("mkfifo failed");
  }
  const go = Deno.openSync(fifo, { read: true, write: true });
  try {
    const t0 = epochUs();
    const child = spawnDriver(BASH, state, null, dir, STAMPED_WARM, ["warm"]);
    const t1 = epochUs();
    go.writeSync(new TextEncoder().encode("stop\n"));
    const [, stderr] = await Promise.all([
      child.stdout.cancel(),
      new Response(child.stderr).bytes(),
      child.status,
    ]);
    const at = stamps(stderr);
    add("warm spawn: spawn() call", (t1 - t0) / 1000);
    add("  spawn..1st driver command", (at.get("start")! - t0) / 1000);
    add("  driver setup..FIFO read", (at.get("ready")! - at.get("start")!) / 1000);
    add("  spawn..ready (total)", (at.get("ready")! - t0) / 1000);
  } finally {
    go.close();
    scratch.release(dir);
  }
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
  const [start, end, restoreStart, restoreEnd, declared, functions, dumped] = stderr.text
    .split(" ").map(stampUs);
  const restore = (restoreEnd - restoreStart) / 1000;
  const dump = (dumped - restoreEnd) / 1000;
  add("  hand-over..source start", (start - handOver) / 1000);
  add("    restore (sourced again)", restore);
  add("    FIFO wake-up (the rest)", (start - handOver) / 1000 - restore);
  add("  source (echo hi)", (end - start) / 1000);
  add("  source end..exit seen", (seen - dumped) / 1000);
  add("    dump (its listings again): declare -p", (declared - restoreEnd) / 1000);
  add("    dump (its listings again): declare -f", (functions - declared) / 1000);
  add("    dump (its listings again): alias -p", (dumped - functions) / 1000);
  add("    dump (its listings again): whole", dump);
  add("    exit..exit seen (the rest)", (seen - dumped) / 1000 - dump);
}

/** One sample of every row, the ways of spawning interleaved. */
async function round(): Promise<void> {
  for (const how of ["kernel", "setsid"] as const) await bareSpawn(how);
  for (const how of ["kernel", "deno"] as const) await bareExit(how);
  await run(false);
  await run(true);
  for (const how of ["kernel", "deno", "setsid"] as const) await bareFirstCommand(how);
  await warmSpawn();
}

try {
  for (let i = 0; i < 5; i++) {
    await round();
  }
  rows.clear();
  for (let i = 0; i < RUNS; i++) {
    await round();
  }
  console.log(`bash stages, ${RUNS} runs each, ${VARS} vars/functions/aliases in the state (ms)`);
  console.log(`${"stage".padEnd(44)}     p50      p95  p50/bare`);
  const bare = percentile(rows.get("bare spawn: bash -c true")!.sort((a, b) => a - b), 0.5);
  for (const [label, samples] of rows) {
    samples.sort((a, b) => a - b);
    const p50 = percentile(samples, 0.5);
    console.log(
      `${label.padEnd(44)} ${p50.toFixed(3).padStart(7)}  ` +
        `${percentile(samples, 0.95).toFixed(3).padStart(7)}  ${
          (p50 / bare).toFixed(2).padStart(7)
        }`,
    );
  }
} finally {
  scratch.clear();
  await Deno.remove(dir, { recursive: true });
}
