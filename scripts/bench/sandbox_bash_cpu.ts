/**
 * What a run's bash itself costs inside a resident sandbox (issue 34), in process on the real
 * modules: the bash of a run reads its own CPU time (/proc/self/schedstat) and page faults
 * (/proc/self/stat) at the end of its source, unconfined and in a resident (started by its
 * launcher), cold and on a warm shell, the variants taking turns. Its CPU counts from its fork (the
 * kernel's, or the launcher's clone of a spare) through its start and restore to that point. The
 * session environment is a minimal one, or the bench's own with `FULLENV=1` (locale and the rest).
 */
import { benchAgent, benchRun } from "./bench_agent.ts";
import { bashOwnVariables, type ShellState } from "../../src/kernel/bash/shell_state.ts";
import { runBash } from "../../src/kernel/shells/run.ts";
import { ScratchPool } from "../../src/kernel/bash/scratch_pool.ts";
import { WarmShell } from "../../src/kernel/shells/warm_shell.ts";
import { runSandbox } from "../../src/kernel/policy/principal_sandbox.ts";
import { Residents } from "../../src/kernel/sandbox/residents.ts";
import { NetProxy } from "../../src/kernel/net/proxy.ts";
import { percentile } from "./percentile.ts";

/** Timed rounds (after 5 warm-up rounds): 100, or the `ROUNDS` environment variable. */
const ROUNDS = Number(Deno.env.get("ROUNDS") ?? 100);
const BASH = "/bin/bash";
/** Prints bash's CPU time in ns, its minor and its major page faults. */
const SRC =
  'builtin read -r a b c < /proc/self/schedstat; builtin read -r s < /proc/self/stat; s=${s##*) }; builtin set -- $s; builtin echo "$a $8 ${10}"';
const FULLENV = Deno.env.get("FULLENV") === "1";
const { host, dir, home, proj, setting, policy } = await benchAgent("shoal-bash-cpu-", BASH);
const bashVariables = await bashOwnVariables(BASH);
const scratch = new ScratchPool(dir);
const residents = new Residents(host, BASH, dir, new NetProxy(dir, () => {}), () => {});
const env = FULLENV
  ? new Map(Object.entries(Deno.env.toObject()))
  : new Map([["PATH", Deno.env.get("PATH") ?? "/usr/bin:/bin"], ["HOME", home]]);
const state: ShellState = { cwd: proj, env, vars: new Map(), funcs: new Map(), aliases: new Map() };
const got = new Map<string, number[][]>();

/** The p50 of the CPU time (ms) of the runs of `name`. */
function cpuP50(name: string): number {
  return percentile(got.get(name)!.map((r) => r[0] / 1e6).sort((a, b) => a - b), 0.5);
}

/** One run of SRC, unconfined or in the resident, cold or on a warm shell; records its figures. */
async function one(name: string, confined: boolean, warm: boolean): Promise<void> {
  const sandboxing = runSandbox(setting, policy, false, "agent:bench", proj)!;
  const resident = confined ? await residents.get("bench", sandboxing) : null;
  if (resident !== null) await resident.untilSpare();
  let shell: WarmShell | null = null;
  if (warm) {
    shell = WarmShell.prepare(BASH, bashVariables, state, resident, scratch);
    await new Promise((resolve) => setTimeout(resolve, 60));
  }
  let text = "";
  const stdout = {
    write: (c: Uint8Array) => (text += new TextDecoder().decode(c), Promise.resolve()),
  };
  const run = benchRun({ bash: BASH, bashVariables, state, scratch }, SRC, resident, shell, stdout);
  const exit = await runBash(run);
  if (exit.status !== 0) throw new Error(`${name}: status ${exit.status}`);
  const list = got.get(name) ?? [];
  list.push(text.trim().split(" ").map(Number));
  got.set(name, list);
}

try {
  for (let i = 0; i < ROUNDS + 5; i++) {
    if (i === 5) got.clear();
    await one("cold, unconfined", false, false);
    await one("cold, resident", true, false);
    await one("warm, unconfined", false, true);
    await one("warm, resident", true, true);
  }
  console.log(`bash's own CPU and faults by the end of its source, ${ROUNDS} rounds`);
  console.log("run                    cpu p50 ms  cpu mean ms  minflt mean  majflt");
  for (const [name, rows] of got) {
    const mean = (k: number) => rows.reduce((s, r) => s + r[k], 0) / rows.length;
    console.log(
      `${name.padEnd(22)} ${cpuP50(name).toFixed(3).padStart(10)}  ${
        (mean(0) / 1e6).toFixed(3).padStart(11)
      }  ${mean(1).toFixed(1).padStart(11)}  ${mean(2).toFixed(1).padStart(6)}`,
    );
  }
  for (const start of ["cold", "warm"]) {
    const ratio = cpuP50(`${start}, resident`) / cpuP50(`${start}, unconfined`);
    console.log(
      `${`${start}: resident cpu p50 / unconfined cpu p50`.padEnd(44)} ${ratio.toFixed(2)}`,
    );
  }
} finally {
  await residents.closeAll();
  scratch.clear();
  await Deno.remove(dir, { recursive: true });
}
