/**
 * What each import costs on its own (issue 11): for every module below, a fresh Deno process
 * (under the repository's deno.json) imports it alone and reports the time the import took and
 * how much its RSS grew. Median of {@link RUNS} processes per module. Printed by itself or at the
 * end of `startup.ts`.
 */
import { REPO } from "../../tests/_support/sandbox.ts";

const RUNS = 3;

/** The modules measured: npm packages first, then our own entry points and heavy modules. */
const MODULES: [string, string][] = [
  ["zod", "kernel: params of every request"],
  ["mvdan-sh", "kernel: bash parser, every exec"],
  ["node:sqlite", "kernel: journal"],
  ["jsonc-parser", "kernel: leash files"],
  ["@xterm/headless", "kernel: emulator, first pty.open"],
  ["@modelcontextprotocol/sdk/server/index.js", "SDK Server: no longer loaded"],
  [`file://${REPO}/src/kernel/bash/ast.ts`, "kernel: parser wrapper"],
  [`file://${REPO}/src/kernel/pty/pty.ts`, "kernel: PTYs (emulator lazy)"],
  [`file://${REPO}/src/kernel/rpc/table.ts`, "kernel: every method"],
  [`file://${REPO}/src/kernel/main.ts`, "kernel: whole entry"],
  [`file://${REPO}/main.ts`, "facade: whole entry"],
];

const PROBE = (spec: string) =>
  `const r0 = Deno.memoryUsage().rss; const t0 = performance.now();
   await import(${JSON.stringify(spec)});
   console.log(JSON.stringify({ ms: performance.now() - t0, mib: (Deno.memoryUsage().rss - r0) / 2 ** 20, base: r0 / 2 ** 20 }));`;

interface Cost {
  ms: number;
  mib: number;
  /** RSS in MiB of the fresh process before the import. */
  base: number;
}

async function measureOnce(spec: string): Promise<Cost> {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["eval", "--quiet", `--config=${REPO}/deno.json`, PROBE(spec)],
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
    "module                                        ms  +RSS MiB  used by",
  ];
  let base: number[] = [];
  for (const [spec, use] of MODULES) {
    const costs: Cost[] = [];
    for (let i = 0; i < RUNS; i++) costs.push(await measureOnce(spec));
    base = base.concat(costs.map((c) => c.base));
    const name = spec.replace(`file://${REPO}/`, "");
    lines.push(
      `${name.padEnd(42)} ${median(costs.map((c) => c.ms)).toFixed(0).padStart(5)} ` +
        `${median(costs.map((c) => c.mib)).toFixed(1).padStart(9)}  ${use}`,
    );
  }
  lines.push(`(RSS of a fresh process before its import: ${median(base).toFixed(0)} MiB)`);
  return lines;
}

if (import.meta.main) console.log((await importCostTable()).join("\n"));
