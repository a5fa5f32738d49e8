/**
 * Start-up, side by side (issue 11): `initialize` (spawn → result) of the client command,
 * cold (fresh sandbox per start, so the kernel is autostarted) and warm (kernel running), and
 * the first `shoal_exec` after it; next to `mcp-server-commands` from npm when it is installed
 * (`npm install --prefix /tmp/peer mcp-server-commands`, or PEER_DIR). Prints median and p95
 * in ms, the ratios to the peer's initialize, and idle RSS after one call. With BASE_REPO naming
 * another checkout (e.g. a worktree of main), its client command is measured in the same run
 * too, for a before/after table. Ends with the import cost table of `import_cost.ts`.
 */
import { INITIALIZE } from "../../tests/_support/converse.ts";
import { kernelPid, rssBytes, spawnPiped } from "../../tests/_support/proc.ts";
import { REPO, type Sandbox, sandbox } from "../../tests/_support/sandbox.ts";
import { importCostTable } from "./import_cost.ts";

const RUNS = 7;
const PEER_DIR = Deno.env.get("PEER_DIR") ?? "/tmp/peer";
const PEER_ENTRY = `${PEER_DIR}/node_modules/mcp-server-commands/build/index.js`;
const BASE_REPO = Deno.env.get("BASE_REPO");

interface Sample {
  init: number;
  /** Spawn → first tool result (null for the peer, whose tools differ). */
  firstCall: number | null;
  /** RSS in MiB of the server process (and of the kernel for shoal) after the call. */
  rss: number;
  kernelRss: number | null;
}

/** Spawns `command`, times `initialize` and (for shoal) one `shoal_exec`, then ends it. */
async function measure(
  command: string,
  args: string[],
  env: Record<string, string>,
  box: Sandbox | null,
): Promise<Sample> {
  const t0 = performance.now();
  const child = spawnPiped([command, ...args], env, "null");
  const writer = child.stdin.getWriter();
  const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let buffered = "";
  const until = async (id: number) => {
    while (!buffered.split("\n").some((l) => l.startsWith("{") && JSON.parse(l).id === id)) {
      const { value, done } = await reader.read();
      if (done) throw new Error(`${command} closed stdout`);
      buffered += value;
    }
  };
  const send = (m: unknown) => writer.write(new TextEncoder().encode(JSON.stringify(m) + "\n"));
  await send(INITIALIZE);
  await until(1);
  const init = performance.now() - t0;
  let firstCall: number | null = null;
  await send({ jsonrpc: "2.0", method: "notifications/initialized" });
  if (box !== null) {
    await send({
      jsonrpc: "2.0",
      id: 2,
      method: "tools/call",
      params: { name: "shoal_exec", arguments: { src: "true" } },
    });
    await until(2);
    firstCall = performance.now() - t0;
  } else {
    await send({ jsonrpc: "2.0", id: 2, method: "tools/list" });
    await until(2);
  }
  const rss = rssBytes(child.pid) / 2 ** 20;
  const kernelRss = box === null ? null : rssBytes(kernelPid(box.socket())) / 2 ** 20;
  await writer.close();
  await reader.cancel();
  await child.status;
  return { init, firstCall, rss, kernelRss };
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

const rows: [string, Sample[]][] = [];

/** Measures the client command of the checkout at `repo`: cold starts, then warm ones. */
async function measureShoal(repo: string, label: string): Promise<void> {
  const shoal = `${repo}/bin/shoal-mcp`;
  const cold: Sample[] = [];
  for (let i = 0; i < RUNS; i++) {
    const box = await sandbox();
    try {
      cold.push(await measure(shoal, [], box.env(), box));
    } finally {
      await box.cleanup();
    }
  }
  rows.push([`${label} cold (autostart)`, cold]);
  const warmBox = await sandbox();
  try {
    await measure(shoal, [], warmBox.env(), warmBox); // starts the kernel
    const warm: Sample[] = [];
    for (let i = 0; i < RUNS; i++) warm.push(await measure(shoal, [], warmBox.env(), warmBox));
    rows.push([`${label} warm (kernel up)`, warm]);
  } finally {
    await warmBox.cleanup();
  }
}

await measureShoal(REPO, "shoal");
if (BASE_REPO !== undefined) await measureShoal(BASE_REPO, "base");

let peer: Sample[] | null = null;
try {
  Deno.statSync(PEER_ENTRY);
  peer = [];
  const node = new Deno.Command("sh", { args: ["-c", "command -v node"] }).outputSync();
  const nodePath = new TextDecoder().decode(node.stdout).trim();
  const env = { PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin", HOME: Deno.env.get("HOME") ?? "/" };
  for (let i = 0; i < RUNS; i++) peer.push(await measure(nodePath, [PEER_ENTRY], env, null));
  rows.push(["mcp-server-commands", peer]);
} catch (e) {
  if (!(e instanceof Deno.errors.NotFound)) throw e;
  console.log(`(mcp-server-commands not installed at ${PEER_DIR}: no side-by-side figures)`);
}

console.log(`start-up, ${RUNS} runs each (ms: median p95)`);
console.log("server                   initialize      first exec    idle RSS MiB (server, kernel)");
for (const [label, samples] of rows) {
  const first = samples[0].firstCall === null
    ? "     -      -"
    : stats(samples.map((s) => s.firstCall!));
  const kernel = samples[0].kernelRss === null
    ? "-"
    : median(samples.map((s) => s.kernelRss!)).toFixed(0);
  console.log(
    `${label.padEnd(24)} ${stats(samples.map((s) => s.init))}   ${first}    ` +
      `${median(samples.map((s) => s.rss)).toFixed(0)}, ${kernel}`,
  );
}
if (peer !== null) {
  const base = median(peer.map((s) => s.init));
  for (const [label, samples] of rows.filter(([, samples]) => samples !== peer)) {
    const ratio = median(samples.map((s) => s.init)) / base;
    console.log(`${label}: initialize ${ratio.toFixed(2)}x mcp-server-commands`);
  }
}
console.log(`load: ${Deno.loadavg().map((l) => l.toFixed(2)).join(" ")}`);
console.log((await importCostTable()).join("\n"));
