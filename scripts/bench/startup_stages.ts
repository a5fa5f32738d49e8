/**
 * Where a cold start's first exec goes (issue 33), stage by stage: startup.ts's "cold, agent" row
 * (STAGES_MODE=human: the human's) run under `strace -f --seccomp-bpf`, which stops a process only
 * at the calls it traces (execve, bind, accept4), so the start runs ~10 % slower than untraced. Each
 * stage is the first such call that marks it, in ms from the client's spawn of the facade, read on
 * the wall clock both strace and the client use:
 *  - kernel spawned: the facade's execve of the kernel command (`--socket` in its arguments);
 *  - kernel's Deno: that process's last execve (a source checkout's launcher script execs Deno);
 *  - socket bound: the kernel's bind of its socket;
 *  - probe started: the first bwrap (or its `setsid`) after the bind, the sandbox probe's;
 *  - attach accepted: the kernel's first accept4 that returns a connection;
 *  - session sandbox: the first bwrap after the accept (the agent's resident sandbox; none for
 *    the human);
 *  - run's bash: the first bash after the accept that runs the exec (`__shoal_dir`);
 *  - result: the client has the `tools/call` result.
 * Prints, over STAGES_RUNS runs (default 7, after one that lets the launchers' caches learn the
 * environment), the median time of each stage and of the step from the one before. Needs strace.
 */
import { REPO, stopProcessesMentioning } from "../../tests/_support/sandbox.ts";
import { firstCall, type Mode, printedStart } from "./cold_start.ts";
import { percentile } from "./percentile.ts";

const RUNS = Number(Deno.env.get("STAGES_RUNS") ?? 7);
const MODE: Mode = Deno.env.get("STAGES_MODE") === "human" ? "human" : "agent";

/** The stages, in the order they happen; "result" is the client's. */
const STAGES = [
  "kernel spawned",
  "kernel's Deno",
  "socket bound",
  "probe started",
  "attach accepted",
  "session sandbox",
  "run's bash",
  "result",
] as const;
type Stage = typeof STAGES[number];

/** One traced call: pid, wall-clock ms (epoch), and the rest of strace's line. */
interface Call {
  pid: number;
  at: number;
  text: string;
}

/** strace's lines (`-f -ttt`) as calls, leaving out resumptions, exits and failed calls. */
function calls(trace: string): Call[] {
  const out: Call[] = [];
  for (const line of trace.split("\n")) {
    const m = /^(\d+)\s+(\d+\.\d+) (.*)$/.exec(line);
    if (m === null || /^(<\.\.\.|\+\+\+|---)/.test(m[3]) || / = -1 /.test(m[3])) continue;
    out.push({ pid: Number(m[1]), at: Number(m[2]) * 1000, text: m[3] });
  }
  return out;
}

const BWRAP =
  /^execve\("[^"]*\/(bwrap|setsid)"|^execve\("\/proc\/\d+\/fd\/\d+", .*--die-with-parent/;

/** Each stage's time in ms after `spawnedAt`, or null where the trace has no such call. */
function stages(trace: Call[], socket: string, spawnedAt: number, result: number) {
  const at = new Map<Stage, number | null>(STAGES.map((s) => [s, null]));
  const first = (from: number, test: (c: Call) => boolean) =>
    trace.find((c) => c.at >= from && test(c)) ?? null;
  const spawn = first(0, (c) => c.text.startsWith("execve(") && c.text.includes('"--socket"'));
  if (spawn !== null) {
    at.set("kernel spawned", spawn.at);
    const execs = trace.filter((c) => c.pid === spawn.pid && c.text.startsWith("execve("));
    at.set("kernel's Deno", execs[execs.length - 1].at);
    const bind = first(spawn.at, (c) => c.text.startsWith("bind(") && c.text.includes(socket));
    if (bind !== null) {
      at.set("socket bound", bind.at);
      at.set("probe started", first(bind.at, (c) => BWRAP.test(c.text))?.at ?? null);
      const accept = first(bind.at, (c) => c.pid === spawn.pid && c.text.startsWith("accept4("));
      if (accept !== null) {
        at.set("attach accepted", accept.at);
        if (MODE === "agent") {
          at.set("session sandbox", first(accept.at, (c) => BWRAP.test(c.text))?.at ?? null);
        }
        const bash = (c: Call) =>
          /^execve\("[^"]*\/bash"/.test(c.text) && c.text.includes("__shoal_dir");
        at.set("run's bash", first(accept.at, bash)?.at ?? null);
      }
    }
  }
  for (const [stage, ms] of at) at.set(stage, ms === null ? null : ms - spawnedAt);
  at.set("result", result);
  return at;
}

const { box, argv, env } = await printedStart(REPO, MODE);
const traceFile = `${box.dir}/strace.txt`;
const strace = [
  "strace",
  "-f",
  "--seccomp-bpf",
  "-ttt",
  "-s",
  "200",
  "-e",
  "trace=execve,bind,accept4",
  "-o",
  traceFile,
];
const runs: Map<Stage, number | null>[] = [];
try {
  for (let i = 0; i <= RUNS; i++) {
    const started = await firstCall([...strace, ...argv], env, {
      name: "shoal_exec",
      arguments: { src: "true" },
    });
    // strace ends with the last process it follows: the autostarted kernel goes first
    await stopProcessesMentioning(box.dir);
    await started.end();
    const trace = calls(await Deno.readTextFile(traceFile));
    if (i > 0) runs.push(stages(trace, box.socket(), started.spawnedAt, started.firstCall));
  }
} catch (e) {
  if (e instanceof Deno.errors.NotFound) throw new Error("strace is not installed");
  throw e;
} finally {
  await stopProcessesMentioning(box.dir);
  await box.cleanup();
}

console.log(`cold first exec (${MODE}) under strace, ${RUNS} runs: median ms from the spawn`);
console.log("stage                  at     step");
/** The median of `values`, or null when none. */
const median = (values: number[]) =>
  values.length === 0 ? null : percentile(values.sort((x, y) => x - y), 0.5);
for (const [k, stage] of STAGES.entries()) {
  const ats: number[] = [];
  const steps: number[] = [];
  for (const run of runs) {
    const ms = run.get(stage)!;
    if (ms === null) continue;
    ats.push(ms);
    const before = STAGES.slice(0, k).map((s) => run.get(s)!).filter((v) => v !== null);
    steps.push(ms - (before.at(-1) ?? 0));
  }
  const [at, step] = [median(ats), median(steps)];
  console.log(
    at === null || step === null
      ? `${stage.padEnd(20)}      -        -`
      : `${stage.padEnd(20)} ${at.toFixed(0).padStart(5)} ${step.toFixed(0).padStart(8)}`,
  );
}
console.log(`load: ${Deno.loadavg().map((l) => l.toFixed(2)).join(" ")}`);
