/**
 * Exec latency, side by side: 200 `shoal_exec` calls of `true` through the facade (MCP client →
 * shoal-mcp → kernel → bash), 200 direct kernel `exec` calls by the local human, 200 by a token
 * agent inside the bubblewrap sandbox (when the host has one), and 200 plain `bash -c true`
 * spawns. Prints p50/p95 of each, their ratios to the plain spawn, and the sandbox's cost.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { RpcConnection } from "../../src/protocol/rpc_client.ts";
import { createToken, writePolicy } from "../../tests/_support/principals.ts";
import { sandbox } from "../../tests/_support/sandbox.ts";
import { sdkTransport } from "../../tests/_support/facade.ts";

const N = 200;

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))];
}

/** Times `runs` in turns, one sample of each per round, so load drift hits them alike. */
async function time(
  ...runs: [string, () => Promise<unknown>][]
): Promise<[string, number, number][]> {
  for (let i = 0; i < 10; i++) for (const [, run] of runs) await run(); // warm-up
  const samples = runs.map((): number[] => []);
  for (let i = 0; i < N; i++) {
    for (const [j, [, run]] of runs.entries()) {
      const t0 = performance.now();
      await run();
      samples[j].push(performance.now() - t0);
    }
  }
  return runs.map(([label], j) => {
    const sorted = samples[j].sort((a, b) => a - b);
    return [label, percentile(sorted, 0.5), percentile(sorted, 0.95)];
  });
}

const box = await sandbox();
// The autostarted kernel reads ~/.config/shoal/leash.jsonc: an agent confined to one project.
const proj = `${box.dir}/home/proj`;
await Deno.mkdir(proj);
await writePolicy(`${box.dir}/home/.config/shoal/leash.jsonc`, {
  "agent:bench": {
    fs: { read: ["~/proj/**"], write: ["~/proj/**"] },
    proc_spawn: ["*"],
    auto_apply: "in-grant",
    sandbox: true,
  },
});
const agentToken = (await createToken(box, "agent:bench", "bench")).secret;
const client = new Client({ name: "bench", version: "0" });
try {
  await client.connect(sdkTransport(box));
  // The first facade call autostarts the kernel on the sandbox socket.
  await client.callTool({ name: "shoal_exec", arguments: { src: "true" } });
  const conn = await RpcConnection.connect(box.socket());
  await conn.request("session.attach", { session: "bench" });
  await conn.request("exec", { src: `cd ${proj}` });
  const agent = await RpcConnection.connect(box.socket());
  const caps = await agent.request("session.attach", { session: "bench", token: agentToken });
  const tier = (caps as { caps: { tier: string } }).caps.tier;
  const rows = await time(
    [
      "shoal_exec via facade",
      () => client.callTool({ name: "shoal_exec", arguments: { src: "true" } }),
    ],
    ["kernel exec human", () => conn.request("exec", { src: "true" })],
    [`kernel exec agent (${tier})`, () => agent.request("exec", { src: "true" })],
    [
      "bash -c true spawn",
      () =>
        new Deno.Command("bash", { args: ["-c", "true"], stdout: "null", stderr: "null" }).output(),
    ],
  );
  conn.close();
  agent.close();
  const floor = rows[3];
  console.log(`exec latency, ${N} calls each (ms)`);
  console.log("path                     p50      p95      p50/bash  p95/bash");
  for (const [label, p50, p95] of rows) {
    console.log(
      `${label.padEnd(24)} ${p50.toFixed(2).padStart(7)}  ${p95.toFixed(2).padStart(7)}  ` +
        `${(p50 / floor[1]).toFixed(1).padStart(8)}x ${(p95 / floor[2]).toFixed(1).padStart(8)}x`,
    );
  }
  const [human, sandboxed] = [rows[1], rows[2]];
  console.log(
    `sandbox cost: agent (tier ${tier}) / human p50 ${(sandboxed[1] / human[1]).toFixed(2)}x, ` +
      `p95 ${(sandboxed[2] / human[2]).toFixed(2)}x (bound: p50 <= 1.5x)`,
  );
} finally {
  await client.close().catch(() => {});
  await box.cleanup();
}
