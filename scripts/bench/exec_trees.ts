/**
 * Exec latency of several checkouts of shoal in one run, for bounds like issue 9's "bench figures
 * do not get worse": `deno run -A scripts/bench/exec_trees.ts [--rounds R] OLD_ROOT NEW_ROOT …`.
 * Each round starts every tree's facade in turn (its own launcher: `bin/shoal-mcp`, or the
 * `deno task mcp` of older trees), with the kernel it autostarts, and times `echo hi` through the
 * facade and directly on the kernel socket with one instrument (this tree's client). The tree
 * order alternates between rounds; p50/p95 pool the rounds, and each tree's ratio is to the first.
 */
import { basename } from "node:path";
import { parseArgs } from "node:util";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
// @ts-types="@modelcontextprotocol/sdk/client/stdio"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { RpcConnection } from "../../src/protocol/rpc_client.ts";
import { sandbox } from "../../tests/_support/sandbox.ts";
import { percentile } from "./percentile.ts";

const N = 200;
const WARMUP = 10;

/** How a checkout starts its facade, as its MCP clients would. */
function launcher(root: string): { command: string; args: string[] } {
  try {
    Deno.statSync(`${root}/bin/shoal-mcp`);
    return { command: `${root}/bin/shoal-mcp`, args: [] };
  } catch {
    const task = JSON.parse(Deno.readTextFileSync(`${root}/deno.json`)).tasks.mcp as string;
    const [, ...args] = task.split(/\s+/);
    return {
      command: Deno.execPath(),
      args: args.map((a) => a.endsWith(".ts") ? `${root}/${a}` : a),
    };
  }
}

/** Milliseconds of `n` calls of `run` after a warm-up. */
async function samples(run: () => Promise<unknown>, n = N): Promise<number[]> {
  for (let i = 0; i < WARMUP; i++) await run();
  const out: number[] = [];
  for (let i = 0; i < n; i++) {
    const t0 = performance.now();
    await run();
    out.push(performance.now() - t0);
  }
  return out;
}

/** One round of one tree: facade and direct kernel samples, from a fresh sandbox. */
async function round(root: string): Promise<{ facade: number[]; direct: number[] }> {
  const box = await sandbox();
  const client = new Client({ name: "bench", version: "0" });
  try {
    await client.connect(
      new StdioClientTransport({ ...launcher(root), env: box.env(), stderr: "pipe" }),
    );
    const facade = await samples(() =>
      client.callTool({ name: "shoal_exec", arguments: { src: "echo hi" } })
    );
    const conn = await RpcConnection.connect(box.socket());
    try {
      await conn.request("session.attach", { session: "bench" });
      return { facade, direct: await samples(() => conn.request("exec", { src: "echo hi" })) };
    } finally {
      conn.close();
    }
  } finally {
    await client.close().catch(() => {});
    await box.cleanup();
  }
}

const args = parseArgs({
  options: { rounds: { type: "string", default: "5" } },
  allowPositionals: true,
});
const roots = args.positionals.map((r) => Deno.realPathSync(r));
if (roots.length < 2) throw new Error("usage: exec_trees.ts [--rounds R] ROOT ROOT …");
const rounds = Number(args.values.rounds);
const pooled = roots.map(() => ({ facade: [] as number[], direct: [] as number[] }));
for (let r = 0; r < rounds; r++) {
  const order = roots.map((_, i) => i);
  if (r % 2 === 1) order.reverse();
  for (const i of order) {
    const got = await round(roots[i]);
    pooled[i].facade.push(...got.facade);
    pooled[i].direct.push(...got.direct);
  }
}
const stats = (xs: number[]) => {
  const sorted = [...xs].sort((a, b) => a - b);
  return [percentile(sorted, 0.5), percentile(sorted, 0.95)];
};
console.log(`exec latency of echo hi, ${rounds} rounds x ${N} calls per path and tree (ms)`);
console.log("tree            path      p50      p95  p50/first  p95/first");
for (const path of ["facade", "direct"] as const) {
  const [base50, base95] = stats(pooled[0][path]);
  roots.forEach((root, i) => {
    const [p50, p95] = stats(pooled[i][path]);
    console.log(
      `${basename(root).padEnd(15)} ${path.padEnd(6)} ${p50.toFixed(2).padStart(7)}  ` +
        `${p95.toFixed(2).padStart(7)}  ${(p50 / base50).toFixed(2).padStart(8)}x ` +
        `${(p95 / base95).toFixed(2).padStart(8)}x`,
    );
  });
}
