/**
 * Exec latency of several checkouts of shoal in one run, for bounds like issue 9's "bench figures
 * do not get worse": `deno run -A scripts/bench/exec_trees.ts [--rounds R] [--calls N]
 * [--human-only] OLD NEW …` (`--human-only` leaves out the agents, whose policy trees older than
 * its `sandbox` field refuse).
 * Every tree's facade runs at once (each by its own launcher: `bin/shoal-mcp`, or the
 * `deno task mcp` of older trees) with the kernel it autostarted; each round times a block of
 * `echo hi` calls through each facade and then directly on its kernel socket (by the local human,
 * by a token agent with `sandbox: false` and by the same agent sandboxed, issue 12), then `echo`
 * of new bytes each call (two new CAS blobs), back to back and 20 ms apart as an agent's calls come
 * (`paced`), and the stateful sequence of `exec_latency.ts`
 * (`export X=$i` and `echo $X`, alternating across two connections on one session), trees in turn
 * (the order alternating), with one instrument (this tree's clients). Short blocks in many rounds
 * let every tree see the same load; the ratios are medians of per-round ratios to the first tree,
 * and, per tree, of the agents' p50 to the human's.
 */
import { basename } from "node:path";
import { parseArgs } from "node:util";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
// @ts-types="@modelcontextprotocol/sdk/client/stdio"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { RpcConnection } from "../../src/protocol/rpc_client.ts";
import { createToken, writePolicy } from "../../tests/_support/principals.ts";
import { sandbox } from "../../tests/_support/sandbox.ts";
import { percentile } from "./percentile.ts";

const WARMUP = 3;

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

/** Milliseconds of `n` calls of `run` after a short warm-up, each after `pauseMs` of idle time. */
async function samples(run: () => Promise<unknown>, n: number, pauseMs = 0): Promise<number[]> {
  for (let i = 0; i < WARMUP; i++) await run();
  const out: number[] = [];
  for (let i = 0; i < n; i++) {
    if (pauseMs) await new Promise((resolve) => setTimeout(resolve, pauseMs));
    const t0 = performance.now();
    await run();
    out.push(performance.now() - t0);
  }
  return out;
}

/** One tree's facade client and direct kernel connections, in their own sandbox. */
interface Tree {
  name: string;
  facade: () => Promise<unknown>;
  direct: () => Promise<unknown>;
  free: () => Promise<unknown>;
  sandboxed: () => Promise<unknown>;
  fresh: () => Promise<unknown>;
  paced: () => Promise<unknown>;
  stateful: () => Promise<unknown>;
  close(): Promise<void>;
}

/** An agent confined to one project, as exec_latency.ts has it. */
const AGENT = {
  fs: { read: ["~/proj/**"], write: ["~/proj/**"] },
  proc_spawn: ["*"],
  auto_apply: "in-grant",
  sandbox: true,
};

/**
 * Starts a tree's facade (which autostarts its kernel, reading the agents' policy from
 * ~/.config/shoal/leash.jsonc) and attaches direct connections: the local human, and unless
 * `humanOnly` (for trees older than the policy's `sandbox` field) the agent with the sandbox off
 * and on, each agent in a session of its own in the project.
 */
async function startTree(root: string, humanOnly: boolean): Promise<Tree> {
  const box = await sandbox();
  const proj = `${box.dir}/home/proj`;
  await Deno.mkdir(proj);
  const tokens: string[] = [];
  if (!humanOnly) {
    await writePolicy(`${box.dir}/home/.config/shoal/leash.jsonc`, {
      "agent:bench": AGENT,
      "agent:free": { ...AGENT, sandbox: false },
    });
    tokens.push((await createToken(box, "agent:free", "free")).secret);
    tokens.push((await createToken(box, "agent:bench", "bench")).secret);
  }
  const client = new Client({ name: "bench", version: "0" });
  await client.connect(
    new StdioClientTransport({ ...launcher(root), env: box.env(), stderr: "pipe" }),
  );
  const facade = () => client.callTool({ name: "shoal_exec", arguments: { src: "echo hi" } });
  await facade();
  const conn = await RpcConnection.connect(box.socket());
  const agents: RpcConnection[] = [];
  for (const [i, session] of (humanOnly ? [] : ["bench-free", "bench-agent"]).entries()) {
    await conn.request("session.attach", { session });
    await conn.request("exec", { src: `cd ${proj}` });
    agents.push(await RpcConnection.connect(box.socket()));
    await agents[i].request("session.attach", { session, token: tokens[i] });
  }
  const pair = await Promise.all([0, 1].map(() => RpcConnection.connect(box.socket())));
  for (const c of pair) await c.request("session.attach", { session: "stateful" });
  await conn.request("session.attach", { session: "bench" });
  let n = 0;
  return {
    name: basename(root),
    facade,
    direct: () => conn.request("exec", { src: "echo hi" }),
    free: () => agents[0].request("exec", { src: "echo hi" }),
    sandboxed: () => agents[1].request("exec", { src: "echo hi" }),
    fresh: () => conn.request("exec", { src: `echo fresh-${n++}` }),
    paced: () => conn.request("exec", { src: `echo paced-${n++}` }),
    stateful: () => {
      // export on one connection, echo on the other; the two swap roles every pair
      const i = n++;
      const setter = (i >> 1) % 2;
      return i % 2
        ? pair[1 - setter].request("exec", { src: "echo $X" })
        : pair[setter].request("exec", { src: `export X=${i}` });
    },
    close: async () => {
      conn.close();
      for (const c of pair) c.close();
      for (const agent of agents) agent.close();
      await client.close().catch(() => {});
      await box.cleanup();
    },
  };
}

const ALL_PATHS = ["facade", "direct", "free", "sandboxed", "fresh", "paced", "stateful"] as const;
const args = parseArgs({
  options: {
    rounds: { type: "string", default: "10" },
    calls: { type: "string", default: "50" },
    "human-only": { type: "boolean", default: false },
  },
  allowPositionals: true,
});
const roots = args.positionals.map((r) => Deno.realPathSync(r));
if (roots.length < 2) {
  console.error("usage: exec_trees.ts [--rounds R] [--calls N] [--human-only] ROOT ROOT …");
  Deno.exit(2);
}
const [rounds, calls] = [Number(args.values.rounds), Number(args.values.calls)];
const humanOnly = args.values["human-only"];
const PATHS = ALL_PATHS.filter((path) => !humanOnly || (path !== "free" && path !== "sandboxed"));
const trees: Tree[] = [];
try {
  for (const root of roots) trees.push(await startTree(root, humanOnly));
  // got[tree][path][round]: the samples of one block.
  const got = trees.map(() =>
    Object.fromEntries(PATHS.map((path) => [path, [] as number[][]])) as Record<
      typeof ALL_PATHS[number],
      number[][]
    >
  );
  for (let r = 0; r < rounds; r++) {
    const order = trees.map((_, i) => i);
    if (r % 2 === 1) order.reverse();
    for (const i of order) {
      for (const path of PATHS) {
        got[i][path].push(await samples(trees[i][path], calls, path === "paced" ? 20 : 0));
      }
    }
  }
  const p = (xs: number[], q: number) => percentile([...xs].sort((a, b) => a - b), q);
  console.log(
    `exec latency (echo hi but fresh, stateful): ${rounds} rounds x ${calls} calls per path and tree (ms)`,
  );
  console.log(
    "tree            path         p50      p95  p50/first  p95/first (medians of rounds)",
  );
  for (const path of PATHS) {
    trees.forEach((tree, i) => {
      const all = got[i][path].flat();
      const ratio = (q: number) =>
        p(got[i][path].map((block, r) => p(block, q) / p(got[0][path][r], q)), 0.5);
      console.log(
        `${tree.name.padEnd(15)} ${path.padEnd(9)} ${p(all, 0.5).toFixed(2).padStart(7)}  ` +
          `${p(all, 0.95).toFixed(2).padStart(7)}  ${ratio(0.5).toFixed(2).padStart(8)}x ` +
          `${ratio(0.95).toFixed(2).padStart(8)}x`,
      );
    });
  }
  if (!humanOnly) {
    console.log("tree            p50 of agent / human direct (medians of rounds)");
    trees.forEach((tree, i) => {
      const over = (path: "free" | "sandboxed") =>
        p(got[i][path].map((block, r) => p(block, 0.5) / p(got[i].direct[r], 0.5)), 0.5);
      console.log(
        `${tree.name.padEnd(15)} sandbox: false ${over("free").toFixed(2)}x   sandboxed ` +
          `${over("sandboxed").toFixed(2)}x   sandboxed / sandbox: false ` +
          `${
            p(got[i].sandboxed.map((b, r) => p(b, 0.5) / p(got[i].free[r], 0.5)), 0.5).toFixed(2)
          }x`,
      );
    });
  }
} finally {
  for (const tree of trees) await tree.close();
}
