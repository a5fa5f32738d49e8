/**
 * Start-up, side by side (issue 11, 33): `initialize` (spawn → result) of the client command and
 * the first `shoal_exec` of `true` after it (spawn → result), next to `mcp-server-commands` from
 * npm when it is installed (`npm install --prefix /tmp/peer mcp-server-commands`, or PEER_DIR),
 * whose first call is its `run_command` of the same command. Rows of shoal:
 *  - cold, agent: what users get (M-ONB-1): the configuration `--print-config claude-desktop
 *    --project DIR` printed, run as printed, so the agent runs sandboxed (tier B where bwrap
 *    works), with its kernel autostarted;
 *  - cold, human: the same without a token (`--as-human`), unsandboxed;
 *  - warm: the human's, with the kernel already up.
 * A cold start is a user's daily one: the state directory, policy and token exist and the
 * launcher's flag cache holds this environment's answer (one sandbox per row, its kernel stopped
 * after each run), only the kernel is not running.
 * Prints median and p95 in ms, the ratios to the peer's (issue 33's targets: cold initialize ≤
 * 2.0×, first exec ≤ 2.5×), the CPU time of each process's main thread up to the first result
 * (Linux; the figure the load of other sessions on a shared machine changes least: a process
 * waiting for a core adds wall time, not CPU time), and idle RSS after one call. With BASE_REPO naming another checkout
 * (e.g. a worktree of main), its rows are measured in the same run too, for a before/after table.
 * Every run of one server takes turns with one of each other (issue 33: measured in blocks, a load
 * that came and went on this shared machine favoured whichever block it missed). Ends with the
 * import cost table of `import_cost.ts` unless STARTUP_ROWS_ONLY=1.
 */
import { kernelPid, mainThreadCpuMs, rssBytes } from "../../tests/_support/proc.ts";
import { firstCall, type Mode, printedStart } from "./cold_start.ts";
import {
  REPO,
  type Sandbox,
  sandbox,
  stopProcessesMentioning,
} from "../../tests/_support/sandbox.ts";
import { importCostTable } from "./import_cost.ts";

/** Runs per server: STARTUP_RUNS, else 7. */
const RUNS = Number(Deno.env.get("STARTUP_RUNS") ?? 7);
const PEER_DIR = Deno.env.get("PEER_DIR") ?? "/tmp/peer";
const PEER_ENTRY = `${PEER_DIR}/node_modules/mcp-server-commands/build/index.js`;
const BASE_REPO = Deno.env.get("BASE_REPO");

interface Sample {
  init: number;
  /** Spawn → first tool result (`shoal_exec`, or the peer's `run_command`, of `true`). */
  firstCall: number;
  /** RSS in MiB of the server process (and of the kernel for shoal) after the call. */
  rss: number;
  kernelRss: number | null;
  /** CPU ms of the server's main thread (and of the kernel's, for shoal) up to the result. */
  cpu: number;
  kernelCpu: number | null;
}

/** Spawns `command`, times `initialize` and (for shoal) one `shoal_exec`, then ends it. */
async function measure(
  command: string,
  args: string[],
  env: Record<string, string>,
  box: Sandbox | null,
): Promise<Sample> {
  const call = box === null
    ? { name: "run_command", arguments: { command: "true" } }
    : { name: "shoal_exec", arguments: { src: "true" } };
  const { child, init, firstCall: first, end } = await firstCall([command, ...args], env, call);
  const kernel = box === null ? null : kernelPid(box.socket());
  const cpu = mainThreadCpuMs(child.pid);
  const kernelCpu = kernel === null ? null : mainThreadCpuMs(kernel);
  const rss = rssBytes(child.pid) / 2 ** 20;
  const kernelRss = kernel === null ? null : rssBytes(kernel) / 2 ** 20;
  await end();
  return { init, firstCall: first, rss, kernelRss, cpu, kernelCpu };
}

function stats(values: number[]): string {
  const sorted = [...values].sort((a, b) => a - b);
  const at = (p: number) => sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))];
  return `${at(0.5).toFixed(0).padStart(6)} ${at(0.95).toFixed(0).padStart(6)}`;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}

/** A server measured run by run: its label and one run's sample. */
type Server = [string, () => Promise<Sample>];

/**
 * Cold starts of the client command at `repo` in one sandbox, provisioned once: the printed
 * configuration for `mode`. Each run's kernel is stopped after it, so the next one autostarts.
 */
async function coldShoal(
  repo: string,
  mode: Mode,
  boxes: Sandbox[],
): Promise<() => Promise<Sample>> {
  const { box, argv: [command, ...args], env } = await printedStart(repo, mode);
  boxes.push(box);
  return async () => {
    try {
      return await measure(command, args, env, box);
    } finally {
      await stopProcessesMentioning(box.dir);
    }
  };
}

const repos: [string, string][] = [[REPO, "shoal"]];
if (BASE_REPO !== undefined) repos.push([BASE_REPO, "base"]);
const boxes: Sandbox[] = [];
const servers: Server[] = [];
for (const [repo, label] of repos) {
  servers.push([`${label} cold, agent`, await coldShoal(repo, "agent", boxes)]);
  servers.push([`${label} cold, human`, await coldShoal(repo, "human", boxes)]);
  const box = await sandbox();
  boxes.push(box);
  const shoal = `${repo}/bin/shoal-mcp`;
  await measure(shoal, [], box.env(), box); // starts the kernel
  servers.push([`${label} warm (kernel up)`, () => measure(shoal, [], box.env(), box)]);
}
const PEER_LABEL = "mcp-server-commands";
try {
  Deno.statSync(PEER_ENTRY);
  const node = new Deno.Command("sh", { args: ["-c", "command -v node"] }).outputSync();
  const nodePath = new TextDecoder().decode(node.stdout).trim();
  const env = { PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin", HOME: Deno.env.get("HOME") ?? "/" };
  servers.push([PEER_LABEL, () => measure(nodePath, [PEER_ENTRY], env, null)]);
} catch (e) {
  if (!(e instanceof Deno.errors.NotFound)) throw e;
  console.log(`(mcp-server-commands not installed at ${PEER_DIR}: no side-by-side figures)`);
}
const rows: [string, Sample[]][] = servers.map(([label]) => [label, []]);
try {
  for (const [, run] of servers) await run(); // the launchers' flag caches learn each environment
  for (let i = 0; i < RUNS; i++) {
    for (const [k, [, run]] of servers.entries()) rows[k][1].push(await run());
  }
} finally {
  for (const box of boxes) await box.cleanup();
}
const peer = rows.find(([label]) => label === PEER_LABEL)?.[1] ?? null;

console.log(`start-up, ${RUNS} runs each (ms: median p95)`);
console.log(
  "server                   initialize      first exec    main-thread CPU ms    idle RSS MiB",
);
console.log(
  "                                                       (server, kernel)      (server, kernel)",
);
/** The median of `pick` over `samples`, or "-" where it is null (the peer has no kernel). */
const column = (samples: Sample[], pick: (s: Sample) => number | null) =>
  pick(samples[0]) === null ? "-" : median(samples.map((s) => pick(s)!)).toFixed(0);
for (const [label, samples] of rows) {
  console.log(
    `${label.padEnd(24)} ${stats(samples.map((s) => s.init))}   ` +
      `${stats(samples.map((s) => s.firstCall))}    ` +
      `${`${column(samples, (s) => s.cpu)}, ${column(samples, (s) => s.kernelCpu)}`.padEnd(22)}` +
      `${column(samples, (s) => s.rss)}, ${column(samples, (s) => s.kernelRss)}`,
  );
}
if (peer !== null) {
  const init = median(peer.map((s) => s.init));
  const first = median(peer.map((s) => s.firstCall));
  for (const [label, samples] of rows.filter(([, samples]) => samples !== peer)) {
    console.log(
      `${label}: initialize ${(median(samples.map((s) => s.init)) / init).toFixed(2)}x, ` +
        `first exec ${(median(samples.map((s) => s.firstCall)) / first).toFixed(2)}x ` +
        "mcp-server-commands",
    );
  }
}
console.log(`load: ${Deno.loadavg().map((l) => l.toFixed(2)).join(" ")}`);
// STARTUP_ROWS_ONLY=1 leaves it out: a minute more under load, when only the rows are wanted
if (Deno.env.get("STARTUP_ROWS_ONLY") !== "1") console.log((await importCostTable()).join("\n"));
