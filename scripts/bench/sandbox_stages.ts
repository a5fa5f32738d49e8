/**
 * What the sandbox adds to one exec (issue 12), in process on the real modules: the view and
 * confinement key a sandboxed exec computes, then `echo hi` run by `runBash` unconfined and inside
 * a resident sandbox (P-SBX-4), cold and on a warm shell, its bash started by the resident's
 * launcher or entering through nsenter and setpriv (the chain, without a launcher), and, for
 * comparison, through a bwrap built for the run alone (what every sandboxed exec paid before
 * residents). The variants take
 * turns within each round so the machine's load hits them alike; prints p50/p95 and the ratios
 * of the same run. The programs that enter the resident are timed alone too (`bash -c true` under
 * setsid, then behind nsenter, then behind nsenter and setpriv, and by the launcher): what each
 * one adds to a spawn. Last, runs back to back as the kernel serves them in a burst (two warm
 * shells kept ready, topped up once a run has ended, in its resident once the launcher has a
 * spare), unconfined
 * and in the resident: each split at the moment its source ran (hand-over → source, source →
 * end), and the CPU time one run costs the kernel (this process), the launcher, and the processes
 * it reaps (its spares, forked perl until each execs its bash, and the bash) or the kernel reaps.
 * `exec_latency.ts` measures the whole path over the socket.
 */
import { benchAgent, benchRun } from "./bench_agent.ts";
import { bashOwnVariables, type ShellState } from "../../src/kernel/bash/shell_state.ts";
import { runBash } from "../../src/kernel/shells/run.ts";
import { ScratchPool } from "../../src/kernel/bash/scratch_pool.ts";
import { WarmShell } from "../../src/kernel/shells/warm_shell.ts";
import { confinementKey, sandboxCommand } from "../../src/kernel/sandbox/command.ts";
import { runSandbox } from "../../src/kernel/policy/principal_sandbox.ts";
import { Residents } from "../../src/kernel/sandbox/residents.ts";
import type { Resident } from "../../src/kernel/sandbox/resident.ts";
import { NetProxy } from "../../src/kernel/net/proxy.ts";
import { percentile, printStages } from "./percentile.ts";
import {
  cpuMs,
  pageFaults,
  reapedChildrenCpuMs,
  reapedChildrenPageFaults,
} from "../../tests/_support/proc.ts";
import { launcherPids } from "./launcher_pid.ts";

/** Timed rounds (after 5 warm-up rounds): 100, or the `ROUNDS` environment variable for a quick look. */
const ROUNDS = Number(Deno.env.get("ROUNDS") ?? 100);
const BASH = "/bin/bash";
const SRC = "echo hi";

const { host, dir, home, proj, setting, policy } = await benchAgent("shoal-sandbox-stages-", BASH);
const bashVariables = await bashOwnVariables(BASH);
const scratch = new ScratchPool(dir);
const residents = new Residents(host, BASH, dir, new NetProxy(dir, () => {}), () => {});
const chainResidents = new Residents(host, BASH, dir, new NetProxy(dir, () => {}), () => {}, false);
const state: ShellState = {
  cwd: proj,
  env: new Map([["PATH", Deno.env.get("PATH") ?? "/usr/bin:/bin"], ["HOME", home]]),
  vars: new Map(),
  funcs: new Map(),
  aliases: new Map(),
};
const sink = { write: () => Promise.resolve() };
const stages = new Map<string, number[]>();

function record(name: string, ms: number): void {
  const list = stages.get(name) ?? [];
  list.push(ms);
  stages.set(name, list);
}

async function timed<T>(name: string, work: () => Promise<T> | T): Promise<T> {
  const t0 = performance.now();
  const result = await work();
  record(name, performance.now() - t0);
  return result;
}

/**
 * One `runBash` of SRC, unconfined or in the resident of `confined` (with the launcher, or the
 * chain's); a warm variant prepares its shell first and lets it settle.
 */
async function bashRun(name: string, confined: Residents | null, warm: boolean): Promise<void> {
  const sandboxing = runSandbox(setting, policy, false, "agent:bench", proj)!;
  const resident = confined === null ? null : await confined.get("bench", sandboxing);
  let shell: WarmShell | null = null;
  if (warm) {
    shell = WarmShell.prepare(BASH, bashVariables, state, resident, scratch);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  const run = benchRun({ bash: BASH, bashVariables, state, scratch }, SRC, resident, shell, sink);
  const exit = await timed(name, () => runBash(run));
  if (exit.status !== 0) throw new Error(`${name}: status ${exit.status}`);
}

/** SRC through a bwrap built for this run alone, as before resident sandboxes. */
async function ownBwrap(): Promise<void> {
  const sandboxing = runSandbox(setting, policy, false, "agent:bench", proj)!;
  const [cmd, ...args] = sandboxCommand({ ...sandboxing, cwd: proj, scratch: dir, proxy: null }, [
    BASH,
    "-c",
    SRC,
  ]);
  await timed("cold, a bwrap of its own", async () => {
    const out = await new Deno.Command(cmd, { args, stdout: "null", stderr: "null" }).output();
    if (!out.success) throw new Error("bwrap run failed");
  });
}

/**
 * `bash -c true` under setsid: alone, behind nsenter, or behind nsenter and setpriv; one that
 * enters is held by the resident as a run is (it keeps the resident up and is swept after).
 */
async function enterChain(name: string, programs: number): Promise<void> {
  const resident = await chainResidents.get(
    "bench",
    runSandbox(setting, policy, false, "agent:bench", proj)!,
  );
  const argv = [BASH, "-c", "true"];
  const full = resident.command("/", argv);
  const chain = [[], full.slice(0, full.indexOf("--") + 1), full.slice(0, -argv.length)][programs];
  await timed(name, async () => {
    const child = new Deno.Command("setsid", {
      args: [...chain, ...argv],
      stdout: "null",
      stderr: "null",
    }).spawn();
    if (programs > 0) resident.hold(child);
    if (!(await child.status).success) throw new Error(`${name} failed`);
  });
}

/**
 * A session environment too long for one request record (16 KiB): the launcher takes its run
 * through a file in the run's scratch directory.
 */
const longState: ShellState = {
  ...state,
  env: new Map([...state.env, ["LONG", "x".repeat(16384)]]),
};

/** `bash -c true` in `session` started by the resident's launcher ({@link Resident.spawn}). */
async function launched(name: string, session: ShellState): Promise<void> {
  const resident = await residents.get(
    "bench",
    runSandbox(setting, policy, false, "agent:bench", proj)!,
  );
  const dir = resident.pool.acquire();
  await timed(name, async () => {
    const child = resident.spawn(session, [BASH, "-c", "true"], dir);
    resident.hold(child);
    // only a launched run's FIFOs are known by name: else it went through nsenter (no spare yet)
    if (child.pipes === undefined) throw new Error(`${name}: not started by the launcher`);
    await Promise.all([child.stdout.cancel(), child.stderr.cancel()]);
    if (!(await child.status).success) throw new Error("launcher spawn failed");
  });
  resident.pool.release(dir);
}

/** Runs of one back-to-back chain, and chains of each kind (taking turns). */
const CHAIN = 20;
const CHAINS = 10;

/**
 * `CHAIN` runs back to back in `resident` (or unconfined), the warm shells prepared as the kernel
 * does in a burst (`exec/warm_shells.ts`): two kept ready, topped up once a run has ended, in a
 * resident each once its launcher has a spare. Records each run's split at the moment its source
 * ran (bash's clock).
 */
async function backToBack(name: string, resident: Resident | null): Promise<void> {
  const ready: WarmShell[] = [];
  let topping = false;
  /** Two ready, as the kernel keeps them: a view per prepare, in a resident once it has a spare. */
  const topUp = async () => {
    if (topping) return;
    topping = true;
    while (ready.length < 2) {
      if (resident !== null) {
        await resident.untilSpare();
        runSandbox(setting, policy, false, "agent:bench", proj);
      }
      const shell = WarmShell.prepare(BASH, bashVariables, state, resident, scratch);
      if (shell === null) throw new Error(`${name}: no warm shell`);
      ready.push(shell);
    }
    topping = false;
  };
  await topUp();
  await new Promise((resolve) => setTimeout(resolve, 100));
  for (let i = 0; i < CHAIN; i++) {
    const warm = ready.shift();
    if (warm === undefined) throw new Error(`${name}: run ${i} found no warm shell`);
    let ran = 0;
    const stdout = {
      write: (chunk: Uint8Array) => {
        ran = Number(new TextDecoder().decode(chunk)) * 1000 - performance.timeOrigin;
        return Promise.resolve();
      },
    };
    const shell = { bash: BASH, bashVariables, state, scratch };
    const run = benchRun(shell, "echo $EPOCHREALTIME", resident, warm, stdout);
    const t0 = performance.now();
    const exit = await runBash(run);
    const end = performance.now();
    if (exit.status !== 0 || exit.pid !== warm.child.pid) {
      throw new Error(`${name}: run ${i} did not run on its warm shell`);
    }
    record(`${name}: run`, end - t0);
    record(`${name}: hand-over..source`, ran - t0);
    record(`${name}: source..end`, end - ran);
    topUp(); // once the answer is on its way
    await new Promise((resolve) => setTimeout(resolve, 0)); // the answer, the next request
  }
  while (topping) await new Promise((resolve) => setTimeout(resolve, 5));
  await Promise.all(ready.map((shell) => shell.discard()));
}

/**
 * The CPU time (ms) and the page faults per back-to-back run of `CHAINS` chains, unconfined or in
 * the resident of {@link residents}: this process's (the kernel's), those of the processes it
 * reaps, and the resident's launcher's and those of the processes it reaps. A page fault costs
 * some µs on a paravirtualised host: a fork's copy-on-write faults can outweigh its syscalls.
 */
async function chainCpu(name: string, confined: boolean): Promise<number[]> {
  const resident = confined
    ? await residents.get("bench", runSandbox(setting, policy, false, "agent:bench", proj)!)
    : null;
  const launcher = confined ? launcherPids(Deno.pid)[0] ?? null : null;
  if (confined && launcher === null) throw new Error("no launcher below this process");
  const read = () => [
    cpuMs(Deno.pid),
    reapedChildrenCpuMs(Deno.pid),
    launcher === null ? 0 : cpuMs(launcher),
    launcher === null ? 0 : reapedChildrenCpuMs(launcher),
    pageFaults(Deno.pid),
    reapedChildrenPageFaults(Deno.pid),
    launcher === null ? 0 : pageFaults(launcher),
    launcher === null ? 0 : reapedChildrenPageFaults(launcher),
  ];
  const before = read();
  for (let i = 0; i < CHAINS; i++) await backToBack(name, resident);
  return read().map((x, i) => (x - before[i]) / (CHAINS * CHAIN));
}

async function round(): Promise<void> {
  const sandboxing = await timed(
    "view (sandboxFor)",
    () => runSandbox(setting, policy, false, "agent:bench", proj),
  );
  await timed("confinement key", () => confinementKey(sandboxing));
  await bashRun("cold, unconfined", null, false);
  await bashRun("cold, resident, launcher", residents, false);
  await bashRun("cold, resident, chain", chainResidents, false);
  await ownBwrap();
  await bashRun("warm, unconfined", null, true);
  await bashRun("warm, resident, launcher", residents, true);
  await bashRun("warm, resident, chain", chainResidents, true);
  await enterChain("spawn: setsid bash", 0);
  await enterChain("spawn: + nsenter", 1);
  await enterChain("spawn: + nsenter + setpriv", 2);
  await launched("spawn: launcher", state);
  await launched("spawn: launcher, 16 KiB env", longState);
}

try {
  const t0 = performance.now();
  if (
    !(await residents.get("bench", runSandbox(setting, policy, false, "agent:bench", proj)!))
      .launches
  ) {
    throw new Error("no launcher in the resident (no perl?)");
  }
  record("resident start", performance.now() - t0);
  for (let i = 0; i < 5; i++) await round();
  for (const name of stages.keys()) if (name !== "resident start") stages.delete(name);
  for (let i = 0; i < ROUNDS; i++) await round();
  const p50 = (name: string) => percentile(stages.get(name)!, 0.5);
  printStages(`sandbox stages, in process, ${ROUNDS} rounds of \`${SRC}\` (ms)`, stages);
  const ratios: [string, string, string][] = [
    ["warm: launcher p50 / unconfined p50", "warm, resident, launcher", "warm, unconfined"],
    ["warm: chain p50 / unconfined p50", "warm, resident, chain", "warm, unconfined"],
    ["cold: launcher p50 / unconfined p50", "cold, resident, launcher", "cold, unconfined"],
    ["cold: chain p50 / unconfined p50", "cold, resident, chain", "cold, unconfined"],
    ["spawn: launcher / setsid bash", "spawn: launcher", "spawn: setsid bash"],
    ["spawn: launcher, 16 KiB env / launcher", "spawn: launcher, 16 KiB env", "spawn: launcher"],
    [
      "spawn: + nsenter + setpriv / setsid bash",
      "spawn: + nsenter + setpriv",
      "spawn: setsid bash",
    ],
    ["cold: own bwrap p50 / unconfined p50", "cold, a bwrap of its own", "cold, unconfined"],
  ];
  for (const [label, over, under] of ratios) {
    console.log(`${label.padEnd(44)} ${(p50(over) / p50(under)).toFixed(2)}`);
  }
  for (const name of [...stages.keys()]) stages.delete(name);
  const cpu: [string, number[]][] = [];
  for (let i = 0; i < 2; i++) {
    cpu.push(["unconfined", await chainCpu("back to back, unconfined", false)]);
    cpu.push(["resident, launcher", await chainCpu("back to back, resident", true)]);
  }
  printStages(`\nback to back, ${CHAINS * CHAIN * 2} runs of each (ms)`, stages);
  console.log(
    `${"back to back: resident p50 / unconfined p50".padEnd(44)} ` +
      (p50("back to back, resident: run") / p50("back to back, unconfined: run")).toFixed(2),
  );
  console.log("\nCPU per back-to-back run (ms; counters tick every 10 ms)");
  console.log(
    "run                   kernel  kernel's children  launcher  launcher's children  total",
  );
  const totals = new Map<string, number>();
  for (const [label, [kernel, reaped, own, launched]] of cpu) {
    const total = kernel + reaped + own + launched;
    totals.set(label, (totals.get(label) ?? 0) + total);
    console.log(
      `${label.padEnd(20)} ${kernel.toFixed(2).padStart(7)}  ${reaped.toFixed(2).padStart(17)}  ` +
        `${own.toFixed(2).padStart(8)}  ${launched.toFixed(2).padStart(19)}  ${
          total.toFixed(2).padStart(5)
        }`,
    );
  }
  console.log(
    `${"CPU per run: resident / unconfined".padEnd(44)} ` +
      (totals.get("resident, launcher")! / totals.get("unconfined")!).toFixed(2),
  );
  console.log("\npage faults per back-to-back run");
  console.log(
    "run                   kernel  kernel's children  launcher  launcher's children  total",
  );
  for (const [label, counts] of cpu) {
    const [kernel, reaped, own, launched] = counts.slice(4);
    console.log(
      `${label.padEnd(20)} ${kernel.toFixed(0).padStart(7)}  ${reaped.toFixed(0).padStart(17)}  ` +
        `${own.toFixed(0).padStart(8)}  ${launched.toFixed(0).padStart(19)}  ${
          (kernel + reaped + own + launched).toFixed(0).padStart(5)
        }`,
    );
  }
} finally {
  await residents.closeAll();
  await chainResidents.closeAll();
  scratch.clear();
  await Deno.remove(dir, { recursive: true });
}
