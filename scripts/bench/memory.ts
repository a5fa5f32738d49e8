/**
 * Where the kernel's and the facade's memory goes (issue 33), for one or more checkouts in one run
 * (`deno run -A scripts/bench/memory.ts [REPO...]`, default this one), rounds alternating between
 * them so the machine's load hits each alike. Per round, a fresh sandbox: an MCP client starts the
 * checkout's `bin/shoal-mcp` (kernel autostarted) and calls `shoal_exec` ({@link call}), then the
 * RSS of the facade and the kernel (anonymous and file-backed: the deno binary's pages count too) is
 * read idle after one exec, the peak during 200 back-to-back execs (VmHWM, reset first), idle
 * after 1,000, then what each part the kernel loads on demand adds: the analysis worker (a source
 * over INLINE_PARSE_LIMIT), the terminal emulator (the first `pty.open`), and what is left of them
 * after `WORKER_IDLE_WAIT_MS`. The same client drives `mcp-server-commands` when installed (as in
 * `startup.ts`). Ends with `import_cost.ts`'s table: each dependency alone in a fresh Deno.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
// @ts-types="@modelcontextprotocol/sdk/client/stdio"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { RpcConnection } from "../../src/protocol/rpc_client.ts";
import { INLINE_PARSE_LIMIT } from "../../src/protocol/limits.ts";
import { kernelPid, resetPeak } from "../../tests/_support/proc.ts";
import { REPO, sandbox } from "../../tests/_support/sandbox.ts";
import { delay } from "../../tests/_support/wait.ts";
import { importCostTable } from "./import_cost.ts";

const ROUNDS = Number(Deno.env.get("ROUNDS") ?? 3);
const PEAK_EXECS = 200;
const TOTAL_EXECS = 1000;
/**
 * How long a process is left alone before an idle figure is read: an idle kernel gives its C
 * heap's free pages back 2-4 s after the last request (`daemon/idle_trim.ts`).
 */
const SETTLE_MS = 5000;
/** How long the kernel is left after the worker's job and the PTY, before "after idle" is read. */
const WORKER_IDLE_WAIT_MS = Number(Deno.env.get("WORKER_IDLE_WAIT_MS") ?? 12000);
const PEER = "/tmp/peer/node_modules/mcp-server-commands/build/index.js";

/**
 * RSS of a process in MiB: all of it, its anonymous pages, its file-backed ones (mostly the deno
 * binary's code, shared with every other Deno process), its private pages (USS: what ending it
 * would free); and VmHWM.
 */
interface Rss {
  rss: number;
  anon: number;
  file: number;
  uss: number;
  hwm: number;
}

function rssOf(pid: number): Rss {
  const status = Deno.readTextFileSync(`/proc/${pid}/status`);
  const kib = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, "m").exec(status)![1]);
  const rollup = Deno.readTextFileSync(`/proc/${pid}/smaps_rollup`);
  const priv = ["Private_Clean", "Private_Dirty"].reduce(
    (sum, name) => sum + Number(new RegExp(`^${name}:\\s+(\\d+) kB`, "m").exec(rollup)![1]),
    0,
  );
  return {
    rss: kib("VmRSS") / 1024,
    uss: priv / 1024,
    anon: kib("RssAnon") / 1024,
    file: kib("RssFile") / 1024,
    hwm: kib("VmHWM") / 1024,
  };
}

/** The figures of one round, in MiB. */
interface Figures {
  facade1: Rss;
  kernel1: Rss;
  facadePeak: number;
  kernelPeak: number;
  facade1000: Rss;
  kernel1000: Rss;
  /** Kernel RSS right after a source over INLINE_PARSE_LIMIT was analysed (the worker ran). */
  kernelWorker: number;
  /** Kernel RSS with a PTY open and drawn (the emulator loaded). */
  kernelPty: number;
  /** Kernel RSS after WORKER_IDLE_WAIT_MS with the PTY closed. */
  kernelAfterIdle: number;
}

/**
 * One `shoal_exec`: the first is the plain `echo hi`, the rest `echo "hi N"`, each source another
 * that needs the bash parser (issue 33: a plain command is answered without it), as an agent's
 * commands are.
 */
const call = (client: Client, i = 0) =>
  client.callTool({
    name: "shoal_exec",
    arguments: { src: i === 0 ? "echo hi" : `echo "hi ${i}"` },
  });

/** One round on the checkout at `repo`. */
async function round(repo: string): Promise<Figures> {
  const box = await sandbox();
  const client = new Client({ name: "bench", version: "0" });
  try {
    const transport = new StdioClientTransport({
      command: `${repo}/bin/shoal-mcp`,
      args: [],
      env: box.env(),
      stderr: "pipe",
    });
    await client.connect(transport);
    await call(client);
    const facade = transport.pid!;
    const kernel = kernelPid(box.socket());
    await delay(SETTLE_MS);
    const facade1 = rssOf(facade);
    const kernel1 = rssOf(kernel);
    resetPeak(facade);
    resetPeak(kernel);
    for (let i = 1; i <= PEAK_EXECS; i++) await call(client, i);
    const facadePeak = rssOf(facade).hwm;
    const kernelPeak = rssOf(kernel).hwm;
    for (let i = 1 + PEAK_EXECS; i < TOTAL_EXECS; i++) await call(client, i);
    await delay(SETTLE_MS);
    const facade1000 = rssOf(facade);
    const kernel1000 = rssOf(kernel);
    const conn = await RpcConnection.connect(box.socket());
    try {
      await conn.request("session.attach", { session: "bench" });
      // Many short commands: the worker parses and analyses it (E-4).
      const big = Array.from(
        { length: Math.ceil(2 * INLINE_PARSE_LIMIT / 20) },
        (_, i) => `echo line-${i} >/dev/null`,
      ).join("\n");
      await conn.request("exec", { src: big });
      const kernelWorker = rssOf(kernel).rss;
      const { pty_id } = await conn.request("pty.open", { cmd: "bash", args: ["--norc"] }) as {
        pty_id: string;
      };
      await conn.request("pty.send", { pty_id, input: "echo drawn\n" });
      await delay(300);
      await conn.request("pty.read", { pty_id });
      const kernelPty = rssOf(kernel).rss;
      await conn.request("pty.close", { pty_id });
      await delay(WORKER_IDLE_WAIT_MS);
      const kernelAfterIdle = rssOf(kernel).rss;
      return {
        facade1,
        kernel1,
        facadePeak,
        kernelPeak,
        facade1000,
        kernel1000,
        kernelWorker,
        kernelPty,
        kernelAfterIdle,
      };
    } finally {
      conn.close();
    }
  } finally {
    await client.close().catch(() => {});
    await box.cleanup();
  }
}

/** The peer's figures: RSS after one call, peak during 200, after 1,000 (null when absent). */
async function peerRound(): Promise<[Rss, number, Rss] | null> {
  try {
    await Deno.stat(PEER);
  } catch {
    return null;
  }
  const client = new Client({ name: "bench", version: "0" });
  const transport = new StdioClientTransport({ command: "node", args: [PEER] });
  await client.connect(transport);
  try {
    const peerCall = () =>
      client.callTool({ name: "run_command", arguments: { command: "echo hi" } });
    await peerCall();
    const pid = transport.pid!;
    await delay(SETTLE_MS);
    const one = rssOf(pid);
    resetPeak(pid);
    for (let i = 0; i < PEAK_EXECS; i++) await peerCall();
    const peak = rssOf(pid).hwm;
    for (let i = 1 + PEAK_EXECS; i < TOTAL_EXECS; i++) await peerCall();
    await delay(SETTLE_MS);
    return [one, peak, rssOf(pid)];
  } finally {
    await client.close().catch(() => {});
  }
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1];
const f = (x: number) => x.toFixed(1).padStart(6);

const repos = Deno.args.length > 0 ? Deno.args : [REPO];
const results = repos.map(() => [] as Figures[]);
const peer: [Rss, number, Rss][] = [];
for (let r = 0; r < ROUNDS; r++) {
  for (const [i, repo] of repos.entries()) results[i].push(await round(repo));
  const p = await peerRound();
  if (p) peer.push(p);
}

console.log(`memory, MiB (median of ${ROUNDS} rounds; RSS = anon + file-backed)`);
for (const [i, repo] of repos.entries()) {
  const m = (pick: (x: Figures) => number) => median(results[i].map(pick));
  const rssRow = (label: string, pick: (x: Figures) => Rss) =>
    console.log(
      `  ${label.padEnd(26)} ${f(m((x) => pick(x).rss))} ${f(m((x) => pick(x).anon))} ` +
        `${f(m((x) => pick(x).file))} ${f(m((x) => pick(x).uss))}`,
    );
  console.log(`${repo}`);
  console.log(`  ${"".padEnd(26)}    RSS   anon   file    USS`);
  rssRow("facade, 1 exec", (x) => x.facade1);
  rssRow("kernel, 1 exec", (x) => x.kernel1);
  rssRow("facade, 1000 execs", (x) => x.facade1000);
  rssRow("kernel, 1000 execs", (x) => x.kernel1000);
  const together1 = m((x) => x.facade1.rss + x.kernel1.rss);
  const together1000 = m((x) => x.facade1000.rss + x.kernel1000.rss);
  const ussTogether = m((x) => x.facade1000.uss + x.kernel1000.uss);
  console.log(
    `  together, 1 / 1000 execs  ${f(together1)} ${f(together1000)} (USS at 1000: ` +
      `${f(ussTogether)})`,
  );
  const peakOver = m((x) => x.facadePeak + x.kernelPeak - x.facade1.rss - x.kernel1.rss);
  console.log(
    `  peak during ${PEAK_EXECS} execs: facade ${f(m((x) => x.facadePeak))}, kernel ` +
      `${f(m((x) => x.kernelPeak))}; together over idle ${f(peakOver)}`,
  );
  console.log(
    `  kernel on demand: +worker ${f(m((x) => x.kernelWorker - x.kernel1000.rss))}, ` +
      `+pty ${f(m((x) => x.kernelPty - x.kernelWorker))}, after ${WORKER_IDLE_WAIT_MS} ms idle ` +
      `${f(m((x) => x.kernelAfterIdle))} (${f(m((x) => x.kernelAfterIdle - x.kernel1000.rss))})`,
  );
}
if (peer.length > 0) {
  const m = (pick: (x: [Rss, number, Rss]) => number) => median(peer.map(pick));
  console.log(
    `mcp-server-commands: 1 exec ${f(m((x) => x[0].rss))} (anon ${f(m((x) => x[0].anon))}, ` +
      `USS ${f(m((x) => x[0].uss))}), ` +
      `peak ${f(m((x) => x[1]))}, 1000 execs ${f(m((x) => x[2].rss))}`,
  );
} else {
  console.log(`note: peer skipped: ${PEER} not found (npm install --prefix /tmp/peer …)`);
}
console.log(`load: ${Deno.loadavg().map((l) => l.toFixed(2)).join(" ")}`);
if (Deno.env.get("IMPORT_COST") !== "0") console.log((await importCostTable()).join("\n"));
