/**
 * What each import costs on its own (issue 11): for every module below, a fresh Deno process
 * (under the repository's deno.json, with the kernel's V8 flags) imports it alone and reports the
 * time the import took and how much its RSS grew, split into anonymous and file-backed pages (the
 * deno binary's code it runs), and its V8 heap in use after a full GC (issue 33). The analysis
 * worker's row starts the worker and waits for its answer to one job: its isolate and parser.
 * Median of {@link RUNS} processes per module. Printed by itself or at the end of `startup.ts` and
 * `memory.ts`.
 */
import { REPO } from "../../tests/_support/sandbox.ts";

const RUNS = 3;

/** The modules measured: npm packages first, then our own entry points and heavy modules. */
const MODULES: [string, string][] = [
  ["zod", "kernel: params of every request"],
  ["mvdan-sh", "kernel: bash parser, first source not plain"],
  ["node:sqlite", "kernel: journal"],
  ["jsonc-parser", "kernel: onboard's policy edits (leash files: policy/jsonc.ts)"],
  ["@xterm/headless", "kernel: emulator, first pty.open"],
  ["@modelcontextprotocol/sdk/server/index.js", "SDK Server: no longer loaded"],
  [`file://${REPO}/src/kernel/bash/ast.ts`, "kernel: parser wrapper"],
  [`file://${REPO}/src/kernel/pty/pty.ts`, "kernel: PTYs (emulator lazy)"],
  [`file://${REPO}/src/kernel/rpc/table.ts`, "kernel: every method"],
  [`worker:file://${REPO}/src/kernel/policy/analysis_worker.ts`, "kernel: sources > 8 KiB (E-4)"],
  [`file://${REPO}/src/kernel/main.ts`, "kernel: whole entry"],
  [`file://${REPO}/main.ts`, "facade: whole entry"],
];

/** Loads `spec`: a module import, or for `worker:URL` a worker's start and one job's answer. */
const LOAD = (spec: string) =>
  spec.startsWith("worker:")
    ? `const w = new Worker(${JSON.stringify(spec.slice(7))}, { type: "module" });
       await new Promise((done) => { w.onmessage = done; w.postMessage({ id: 1, src: "true", state: null, wantAst: false }); });`
    : `await import(${JSON.stringify(spec)});`;

const PROBE = (spec: string) =>
  `const mem = () => { const s = Deno.readTextFileSync("/proc/self/status");
     const kib = (n) => Number(new RegExp(n + ":[^0-9]+([0-9]+)").exec(s)[1]) / 1024;
     return { rss: Deno.memoryUsage().rss / 2 ** 20, anon: kib("RssAnon"), file: kib("RssFile") }; };
   gc(); const h0 = Deno.memoryUsage().heapUsed; const m0 = mem(); const t0 = performance.now();
   ${LOAD(spec)}
   const ms = performance.now() - t0; gc(); const m1 = mem();
   console.log(JSON.stringify({ ms, mib: m1.rss - m0.rss, anon: m1.anon - m0.anon,
     file: m1.file - m0.file, heap: (Deno.memoryUsage().heapUsed - h0) / 2 ** 20, base: m0.rss }));
   Deno.exit(0);`;

interface Cost {
  ms: number;
  mib: number;
  /** Of `mib`: anonymous pages, and file-backed ones. */
  anon: number;
  file: number;
  /** Growth of the main isolate's V8 heap in use, after a full GC, in MiB. */
  heap: number;
  /** RSS in MiB of the fresh process before the import. */
  base: number;
}

const V8_FLAGS = Deno.readTextFileSync(`${REPO}/src/kernel/v8_flags`).trim();

async function measureOnce(spec: string): Promise<Cost> {
  const out = await new Deno.Command(Deno.execPath(), {
    args: [
      "eval",
      "--quiet",
      `--v8-flags=${V8_FLAGS},--expose-gc`,
      `--config=${REPO}/deno.json`,
      PROBE(spec),
    ],
    cwd: REPO,
    stdin: "null",
    stderr: "inherit",
  }).output();
  if (!out.success) throw new Error(`importing ${spec} failed`);
  return JSON.parse(new TextDecoder().decode(out.stdout));
}

function median(values: number[]): number {
  return [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
}

/** The import cost table, one line per module. */
export async function importCostTable(): Promise<string[]> {
  const lines = [
    `import cost, each alone in a fresh Deno process (median of ${RUNS})`,
    "module                                        ms  +RSS MiB (anon  file  heap)  used by",
  ];
  let base: number[] = [];
  for (const [spec, use] of MODULES) {
    const costs: Cost[] = [];
    for (let i = 0; i < RUNS; i++) costs.push(await measureOnce(spec));
    base = base.concat(costs.map((c) => c.base));
    const name = spec.replace(`file://${REPO}/`, "");
    const col = (pick: (c: Cost) => number, width: number) =>
      median(costs.map(pick)).toFixed(1).padStart(width);
    lines.push(
      `${name.padEnd(42)} ${median(costs.map((c) => c.ms)).toFixed(0).padStart(5)} ` +
        `${col((c) => c.mib, 9)} ${col((c) => c.anon, 6)} ${col((c) => c.file, 5)} ` +
        `${col((c) => c.heap, 5)}   ${use}`,
    );
  }
  lines.push(`(RSS of a fresh process before its import: ${median(base).toFixed(0)} MiB)`);
  return lines;
}

if (import.meta.main) console.log((await importCostTable()).join("\n"));
