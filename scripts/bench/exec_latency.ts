/**
 * Exec latency, side by side in one run (issue 10): `echo hi` (in a project holding a copy of this
 * repository's sources) through the facade (MCP client →
 * shoal-mcp → kernel → bash), direct kernel `exec` calls by the local human and by a token agent
 * inside the bubblewrap sandbox (when the host has one; issue 12), plain `bash -c true` spawns, and — when
 * installed with `npm install --prefix /tmp/peer mcp-server-commands` — the same MCP client
 * driving that peer server under Node. Then the stateful sequence: `export X=$i` / `echo $X`
 * alternating across two connections on one session, in turns with the same sequence on one
 * connection (issue 10's "single-connection p50"), every answer checked, on the same warm kernel.
 * The facade runs twice: as the local human (no token) and as the printed configuration runs it
 * (`--print-config`: the agent's token and its project, M-ONB-1), sandboxed in its project's session,
 * which is what users get.
 * Then the facades and the peer (when installed), the human's and the sandboxed agent's direct
 * calls again, calls {@link SPACINGS} ms apart, as an agent calls and then thinks (issues 33, 34),
 * the rows taking turns call by call.
 * Two rows give the floor that K-BASH-1/3 leave any kernel: a plain bash spawned ahead and handed
 * `echo hi` (`bash_floor.ts`), and one cheap request's round trip on the kernel's socket.
 * Every other row takes turns with the others (the facade's too: timed alone right after the
 * kernel's start, it paid for the kernel's warm-up), so their ratios are ones of the same load.
 * Prints p50/p95 of each, the ratios the issues target, and `exec_stages.ts` prints where one
 * exec's time goes. On Linux a last pass counts the CPU time one call costs each process taking
 * part (the client, the facade or peer server, the kernel, the bash processes they reap): a loop
 * of back-to-back calls cannot average less than that total spread over every core.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
// @ts-types="@modelcontextprotocol/sdk/client/stdio"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { RpcConnection } from "../../src/protocol/rpc_client.ts";
import { createToken, writePolicy } from "../../tests/_support/principals.ts";
import { sandbox } from "../../tests/_support/sandbox.ts";
import { sdkTransport } from "../../tests/_support/facade.ts";
import { bashFloor } from "./bash_floor.ts";
import { percentile } from "./percentile.ts";
import { cpuMs, kernelPid, reapedChildrenCpuMs } from "../../tests/_support/proc.ts";
import { launcherPids } from "./launcher_pid.ts";
import { projectEntry } from "../../src/kernel/policy/project_profile.ts";

const N = 200;
const STATEFUL = 500;
/** Steps of the stateful sequence in a block before the other way takes its turn. */
const STATEFUL_BLOCK = 10;
const PEER = "/tmp/peer/node_modules/mcp-server-commands/build/index.js";
/** The row of the facade as `--print-config` configures it: the sandboxed agent (M-ONB-1). */
const AGENT_FACADE = "facade, agent (printed cfg)";

/**
 * A label with the p50 and p95 of `N` timed calls (after 10 warm-up calls), in ms; for shoal's
 * execs also the p50 of bash's own `dur_ns` (hand-over or spawn to exit) and of the rest of each
 * call (kernel, socket, facade: the call's time less its `dur_ns`).
 */
interface Row {
  label: string;
  p50: number;
  p95: number;
  bash?: number;
  rest?: number;
}

/** The `dur_ns` of an exec's outcome in a kernel result or an MCP tool result, in ms. */
function bashMs(result: unknown): number | null {
  const r = result as { value?: { dur_ns?: number }; structuredContent?: unknown };
  const dur = r?.value?.dur_ns ?? (r?.structuredContent as typeof r)?.value?.dur_ns;
  return typeof dur === "number" ? dur / 1e6 : null;
}

/** Calls of one row in a block of {@link timeTogether}. */
const BLOCK = 20;

/**
 * Rows of `runs` timed in turns, blocks of {@link BLOCK} back-to-back calls of each (after 10
 * warm-up calls), so that the machine's load, which other work varies, hits them alike and their
 * ratio holds, while the work a call leaves running (its session's next warm shell) overlaps calls
 * of its own row.
 */
async function timeTogether(runs: [string, () => Promise<unknown>][]): Promise<Row[]> {
  for (const [, run] of runs) for (let i = 0; i < 10; i++) await run();
  const rows = runs.map(() => ({
    samples: [] as number[],
    bash: [] as number[],
    rest: [] as number[],
  }));
  for (let block = 0; block < N / BLOCK; block++) {
    for (const [k, [, run]] of runs.entries()) {
      for (let i = 0; i < BLOCK; i++) {
        const t0 = performance.now();
        const result = await run();
        const ms = performance.now() - t0;
        rows[k].samples.push(ms);
        const inBash = bashMs(result);
        if (inBash === null) continue;
        rows[k].bash.push(inBash);
        rows[k].rest.push(ms - inBash);
      }
    }
  }
  const p50 = (xs: number[]) => percentile(xs.sort((a, b) => a - b), 0.5);
  return runs.map(([label], k) => {
    const { samples, bash, rest } = rows[k];
    const row: Row = { label, p50: p50(samples), p95: percentile(samples, 0.95) };
    if (bash.length === samples.length) [row.bash, row.rest] = [p50(bash), p50(rest)];
    return row;
  });
}

/**
 * An MCP client connected to the peer server and the server's pid, or null (with a note why) when
 * it is not installed or does not start.
 */
async function peerClient(): Promise<{ client: Client; pid: number | null } | null> {
  try {
    await Deno.stat(PEER);
  } catch {
    console.log(`note: peer skipped: ${PEER} not found (npm install --prefix /tmp/peer …)`);
    return null;
  }
  const client = new Client({ name: "bench", version: "0" });
  try {
    const transport = new StdioClientTransport({ command: "node", args: [PEER] });
    await client.connect(transport);
    return { client, pid: transport.pid };
  } catch (e) {
    console.log(`note: peer skipped: ${e}`);
    await client.close().catch(() => {});
    return null;
  }
}

/**
 * `export X=$i` then `echo $X`, `STATEFUL` times each way in blocks that take turns: on two
 * connections of one session, alternating which one sets and which one reads, and all on one
 * connection. Checks every answer.
 */
async function stateful(a: RpcConnection, b: RpcConnection): Promise<[Row, Row]> {
  const samples: [number[], number[]] = [[], []];
  for (let i = 0; i < 2 * STATEFUL; i++) {
    const twoConns = Math.floor(i / STATEFUL_BLOCK) % 2 === 0;
    const [set, get] = !twoConns ? [a, a] : i % 2 === 0 ? [a, b] : [b, a];
    const times = samples[twoConns ? 0 : 1];
    let t0 = performance.now();
    await set.request("exec", { src: `export X=${i}` });
    times.push(performance.now() - t0);
    t0 = performance.now();
    const got = await get.request("exec", { src: "echo $X" }) as { value: { out: unknown } };
    times.push(performance.now() - t0);
    const out = got.value.out as { v: number };
    if (out.v !== i) throw new Error(`stateful sequence: step ${i} read ${JSON.stringify(out)}`);
  }
  return samples.map((times, k) => {
    times.sort((x, y) => x - y);
    return {
      label: `stateful x${STATEFUL} (${k ? "1 conn" : "2 conns"})`,
      p50: percentile(times, 0.5),
      p95: percentile(times, 0.95),
    };
  }) as [Row, Row];
}

/**
 * Pauses between calls of the paced rows, in ms, and the calls each paced row times: with 40, the
 * p50 of the 500 ms row swung by ±0.3 of the ratio between runs (issue 34).
 */
const SPACINGS = [100, 500];
const PACED_CALLS = 100;

/**
 * Rows of `runs`, each call `spacing` ms after the previous call of any row ended, the rows
 * taking turns call by call (after 3 warm-up calls each).
 */
async function timePaced(
  runs: [string, () => Promise<unknown>][],
  spacing: number,
): Promise<Row[]> {
  for (const [, run] of runs) for (let i = 0; i < 3; i++) await run();
  const samples = runs.map(() => [] as number[]);
  for (let i = 0; i < PACED_CALLS; i++) {
    for (const [k, [, run]] of runs.entries()) {
      await new Promise((resolve) => setTimeout(resolve, spacing));
      const t0 = performance.now();
      await run();
      samples[k].push(performance.now() - t0);
    }
  }
  return runs.map(([label], k) => {
    const sorted = samples[k].sort((a, b) => a - b);
    return {
      label: `${label}, ${spacing} ms apart`,
      p50: percentile(sorted, 0.5),
      p95: percentile(sorted, 0.95),
    };
  });
}

/** Calls of one path in the CPU pass: the counters tick every 10 ms. */
const CPU_CALLS = 500;

/** CPU time per call of one path, in ms: by the caller (this process) and by each server process. */
interface CpuRow {
  label: string;
  caller: number;
  /** The server in front of the kernel (the facade, or the peer), when the path has one. */
  server: number | null;
  kernel: number | null;
  /**
   * A sandboxed path's launcher (the perl in the resident), which forks each run's spare: every
   * resident's, the others idle meanwhile.
   */
  launcher: number | null;
  /**
   * The bash (or `sh`) processes the path starts, as their reaper counts them: a sandboxed
   * path's spares too, forked by the launcher before they exec bash.
   */
  shells: number;
}

/**
 * The CPU time per call of {@link CPU_CALLS} back-to-back calls of `run`: this process's, the
 * `server`'s, the `kernel`'s (pids, or null) and the `launchers`' (none: not sandboxed), and the
 * shells' that the `reapers` wait for.
 */
async function cpuPerCall(
  label: string,
  run: () => Promise<unknown>,
  { server, kernel, launchers = [], reapers }: {
    server: number | null;
    kernel: number | null;
    launchers?: number[];
    reapers: number[];
  },
): Promise<CpuRow> {
  const sum = (pids: number[], of: (pid: number) => number) =>
    pids.reduce((total, pid) => total + of(pid), 0);
  const read = () => [
    cpuMs(Deno.pid),
    server === null ? 0 : cpuMs(server),
    kernel === null ? 0 : cpuMs(kernel),
    sum(launchers, cpuMs),
    sum(reapers, reapedChildrenCpuMs),
  ];
  const before = read();
  for (let i = 0; i < CPU_CALLS; i++) await run();
  const [caller, serverMs, kernelMs, launcherMs, shells] = read().map((x, i) =>
    (x - before[i]) / CPU_CALLS
  );
  return {
    label,
    caller,
    server: server === null ? null : serverMs,
    kernel: kernel === null ? null : kernelMs,
    launcher: launchers.length === 0 ? null : launcherMs,
    shells,
  };
}

/**
 * Prints the CPU rows and, for each, the least mean latency that CPU leaves on this host's cores,
 * as a ratio to the spawn p50: of all of it, and of the shells' share alone (what K-BASH-1's bash
 * per call costs whatever the kernel does).
 */
function printCpu(rows: CpuRow[], spawnP50: number): void {
  const cores = navigator.hardwareConcurrency;
  console.log(`\nCPU time per call, ${CPU_CALLS} back-to-back calls each (ms; ${cores} cores)`);
  console.log(
    "path                        caller   server   kernel launcher   shells    total  " +
      "total/cores/spawn  shells/cores/spawn",
  );
  const cell = (x: number | null) => (x === null ? "-" : x.toFixed(2)).padStart(7);
  const total = (row: CpuRow) =>
    row.caller + (row.server ?? 0) + (row.kernel ?? 0) + (row.launcher ?? 0) + row.shells;
  for (const row of rows) {
    console.log(
      `${row.label.padEnd(26)} ${cell(row.caller)}  ${cell(row.server)}  ${cell(row.kernel)}  ` +
        `${cell(row.launcher)}  ${cell(row.shells)}  ${cell(total(row))}  ` +
        `${cell(total(row) / cores / spawnP50)}x           ` +
        `${cell(row.shells / cores / spawnP50)}x`,
    );
  }
  // What the latency bound (sandboxed p50 ≤ 1.5 × direct) meets when both are CPU-bound.
  const direct = rows.find((row) => row.label === "kernel exec direct");
  const confined = rows.find((row) => row.label.startsWith("sandboxed agent"));
  if (direct && confined) {
    console.log(
      `${"sandboxed agent CPU / kernel direct CPU".padEnd(44)} ` +
        `${(total(confined) / total(direct)).toFixed(2).padStart(6)}`,
    );
  }
}

const box = await sandbox();
// The autostarted kernel reads ~/.config/shoal/leash.jsonc: an agent confined to one project.
const proj = `${box.dir}/home/proj`;
await Deno.mkdir(proj);
// A project's shape (this repository's sources: some 50 directories), which the sandboxed agent's
// protected-name scan walks (P-SBX-6): an empty one hid that cost.
for (const part of ["src", "tests", "scripts"]) {
  await new Deno.Command("cp", {
    args: ["-r", new URL(`../../${part}`, import.meta.url).pathname, proj],
  })
    .output();
}
const agentPolicy = {
  fs: { read: ["~/proj/**"], write: ["~/proj/**"] },
  proc_spawn: ["*"],
  auto_apply: "in-grant",
  sandbox: true,
};
// The same agent with the sandbox off: what a token principal costs without it.
await writePolicy(`${box.dir}/home/.config/shoal/leash.jsonc`, {
  "agent:bench": agentPolicy,
  "agent:free": { ...agentPolicy, sandbox: false },
  // what `--print-config` grants (the project profile, M-ONB-2)
  "agent:project": projectEntry(proj),
});
const agentToken = (await createToken(box, "agent:bench", "bench")).secret;
const freeToken = (await createToken(box, "agent:free", "free")).secret;
const projectToken = (await createToken(box, "agent:project", "project")).secret;
const client = new Client({ name: "bench", version: "0" });
const agentClient = new Client({ name: "bench", version: "0" });
const peerServer = await peerClient();
const peer = peerServer?.client ?? null;
try {
  const facadeTransport = sdkTransport(box);
  await client.connect(facadeTransport);
  const viaFacade = () => client.callTool({ name: "shoal_exec", arguments: { src: "echo hi" } });
  await viaFacade(); // autostarts the kernel on the sandbox socket
  // as `--print-config` configures it (M-ONB-1): a token of the project profile and its project
  const agentTransport = sdkTransport(box, { SHOAL_TOKEN: projectToken, SHOAL_PROJECT: proj });
  await agentClient.connect(agentTransport);
  const viaAgentFacade = () =>
    agentClient.callTool({ name: "shoal_exec", arguments: { src: "echo hi" } });
  await viaAgentFacade();
  const a = await RpcConnection.connect(box.socket());
  const b = await RpcConnection.connect(box.socket());
  await a.request("session.attach", { session: "bench" });
  await b.request("session.attach", { session: "bench" });
  await a.request("exec", { src: `cd ${proj}` });
  // The agent works in a session of its own in the same project, so the human's and the agent's
  // calls can take turns, each session keeping its warm shell: every agent exec is sandboxed.
  for (const session of ["bench-agent", "bench-free"]) {
    await a.request("session.attach", { session });
    await a.request("exec", { src: `cd ${proj}` });
  }
  await a.request("session.attach", { session: "bench" });
  const free = await RpcConnection.connect(box.socket());
  await free.request("session.attach", { session: "bench-free", token: freeToken });
  const agent = await RpcConnection.connect(box.socket());
  const attached = await agent.request("session.attach", {
    session: "bench-agent",
    token: agentToken,
  });
  const tier = (attached as { caps: { tier: string } }).caps.tier;
  const spawnTrue = () =>
    new Deno.Command("bash", { args: ["-c", "true"], stdout: "null", stderr: "null" }).output();
  const peerCall = () => peer!.callTool({ name: "run_command", arguments: { command: "echo hi" } });
  const floor = await bashFloor();
  const [
    facade,
    agentFacade,
    direct,
    unconfined,
    confined,
    spawn,
    warmBash,
    roundTrip,
    ...peerRows
  ] = await timeTogether([
    ["shoal_exec via facade", viaFacade],
    [AGENT_FACADE, viaAgentFacade],
    ["kernel exec direct", () => a.request("exec", { src: "echo hi" })],
    ["agent, sandbox: false", () => free.request("exec", { src: "echo hi" })],
    [`sandboxed agent (tier ${tier})`, () => agent.request("exec", { src: "echo hi" })],
    ["bash -c true spawn", spawnTrue],
    ["floor: pre-spawned bash", floor.call],
    ["socket round trip", () => a.request("session.cwd", {})],
    ...(peer ? [["mcp-server-commands", peerCall] as [string, () => Promise<unknown>]] : []),
  ]);
  await floor.close();
  free.close();
  // after the rows above, on the same warm kernel
  const [seq, seqOne] = await stateful(a, b);
  const peerRow = peerRows[0] ?? null;
  const paced: Row[][] = [];
  for (const spacing of SPACINGS) {
    paced.push(
      await timePaced([
        ["shoal_exec via facade", viaFacade],
        [AGENT_FACADE, viaAgentFacade],
        ...(peer ? [["mcp-server-commands", peerCall] as [string, () => Promise<unknown>]] : []),
        ["kernel exec direct", () => a.request("exec", { src: "echo hi" })],
        [`sandboxed agent (tier ${tier})`, () => agent.request("exec", { src: "echo hi" })],
      ], spacing),
    );
  }
  const rows = [
    facade,
    agentFacade,
    direct,
    unconfined,
    confined,
    seq,
    seqOne,
    spawn,
    warmBash,
    roundTrip,
    ...peerRows,
    ...paced.flat(),
  ];
  console.log(`exec latency, ${N} calls each (ms)`);
  console.log(
    "path                          p50      p95   p95/p50  p50/spawn   bash p50  rest p50",
  );
  for (const { label, p50, p95, bash, rest } of rows) {
    const split = bash === undefined
      ? ""
      : `  ${bash.toFixed(2).padStart(8)}  ${rest!.toFixed(2).padStart(8)}`;
    console.log(
      `${label.padEnd(28)} ${p50.toFixed(2).padStart(7)}  ${p95.toFixed(2).padStart(7)}  ` +
        `${(p95 / p50).toFixed(2).padStart(7)}  ${(p50 / spawn.p50).toFixed(2).padStart(8)}x` +
        split,
    );
  }
  const ratio = (label: string, x: number, target: number) =>
    console.log(`${label.padEnd(44)} ${x.toFixed(2).padStart(6)}  (target ≤ ${target})`);
  ratio("kernel direct p50 / spawn p50", direct.p50 / spawn.p50, 0.5);
  // What K-BASH-1/3 leave: a fresh bash that must exit, plus one request on the socket.
  const floorRatio = (warmBash.p50 + roundTrip.p50) / spawn.p50;
  console.log(
    `${"floor p50 / spawn p50".padEnd(44)} ${floorRatio.toFixed(2).padStart(6)}  ` +
      "(pre-spawned bash + socket round trip)",
  );
  ratio("facade p50 / spawn p50", facade.p50 / spawn.p50, 0.6);
  if (peerRow) ratio("facade p50 / mcp-server-commands p50", facade.p50 / peerRow.p50, 0.7);
  for (const [i, spacing] of SPACINGS.entries()) {
    const [own, , other] = paced[i];
    if (peer) ratio(`  the same, ${spacing} ms apart`, own.p50 / other.p50, 1.05);
  }
  if (peerRow) {
    ratio("agent facade p50 / mcp-server-commands p50", agentFacade.p50 / peerRow.p50, 1.05);
    for (const [i, spacing] of SPACINGS.entries()) {
      const [, own, other] = paced[i];
      ratio(`  the same, ${spacing} ms apart`, own.p50 / other.p50, 1.05);
    }
  }
  ratio("stateful p50, 2 conns / 1 conn", seq.p50 / seqOne.p50, 1.2);
  // Not a like-for-like ratio: each `echo $X` stores two new CAS blobs, `echo hi` none.
  console.log(
    `stateful p50 (2 conns) / kernel direct p50     ${(seq.p50 / direct.p50).toFixed(2)}`,
  );
  ratio(`sandboxed agent (${tier}) p50 / kernel direct p50`, confined.p50 / direct.p50, 1.5);
  for (const [i, spacing] of SPACINGS.entries()) {
    const [human, sandboxed] = paced[i].slice(-2);
    ratio(`  the same, ${spacing} ms apart`, sandboxed.p50 / human.p50, 1.5);
  }
  console.log(
    `sandbox's own cost: sandboxed - unsandboxed agent p50 = ` +
      `${(confined.p50 - unconfined.p50).toFixed(2)} ms`,
  );
  const kernel = Deno.build.os === "linux" ? kernelPid(box.socket()) : null;
  // the agents' residents were stopped while their sessions idled: an exec starts each again
  await agent.request("exec", { src: "echo hi" });
  await viaAgentFacade();
  const launchers = kernel === null ? [] : launcherPids(kernel);
  const cpuRows = kernel === null ? null : [
    await cpuPerCall("shoal_exec via facade", viaFacade, {
      server: facadeTransport.pid,
      kernel,
      reapers: [kernel],
    }),
    // the launchers reap the agent's runs; the human facade's shells are the kernel's
    ...(launchers.length === 0 ? [] : [
      await cpuPerCall(AGENT_FACADE, viaAgentFacade, {
        server: agentTransport.pid,
        kernel,
        launchers,
        reapers: launchers,
      }),
    ]),
    await cpuPerCall("kernel exec direct", () => a.request("exec", { src: "echo hi" }), {
      server: null,
      kernel,
      reapers: [kernel],
    }),
    // the launcher reaps the sandboxed runs: their bash, and the spare each was forked as
    ...(launchers.length === 0 ? [] : [
      await cpuPerCall(
        `sandboxed agent (tier ${tier})`,
        () => agent.request("exec", { src: "echo hi" }),
        {
          server: null,
          kernel,
          launchers,
          reapers: launchers,
        },
      ),
    ]),
    await cpuPerCall("bash -c true spawn", spawnTrue, {
      server: null,
      kernel: null,
      reapers: [Deno.pid],
    }),
    ...(peer && peerServer?.pid
      ? [
        await cpuPerCall("mcp-server-commands", peerCall, {
          server: peerServer.pid,
          kernel: null,
          reapers: [peerServer.pid],
        }),
      ]
      : []),
  ];
  if (cpuRows) printCpu(cpuRows, spawn.p50);
  else console.log("note: CPU pass skipped: it reads Linux's /proc");
  if (cpuRows && launchers.length === 0) {
    console.log("note: no launcher in the resident: no sandboxed CPU row");
  }
  agent.close();
  a.close();
  b.close();
} finally {
  await client.close().catch(() => {});
  await agentClient.close().catch(() => {});
  await peer?.close().catch(() => {});
  await box.cleanup();
}
