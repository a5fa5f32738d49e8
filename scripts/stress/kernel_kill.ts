/**
 * Kernel killed under load (issue 13): 20 facades (own MCP client each, one kernel, a session
 * each) loop `sleep 0.2; echo …` execs; once 100 have succeeded the kernel is killed with
 * SIGKILL while every facade has one in flight. Prints: in-flight calls that did not end in a
 * clear MCP error (`-32603 kernel disconnected` or `kernel unavailable`) within 15 s (0), the
 * slowest of them, the kernels serving the socket once every facade has run again (exactly 1,
 * all 20 facades connected to it), `PRAGMA integrity_check` (ok), finished journal rows against
 * execs that reported success (equal), and the `journal` channel seq (continuous: last seq + 1
 * = finished rows).
 *
 *   deno run -A scripts/stress/kernel_kill.ts [--clients N]
 */
// @ts-types="@modelcontextprotocol/sdk/types"
import { McpError } from "@modelcontextprotocol/sdk/types.js";
import { connectMcp, type Mcp } from "../../tests/e2e/_mcp.ts";
import {
  kernelConnections,
  kernelPid,
  kernelPids,
  processLive,
} from "../../tests/_support/proc.ts";
import { sandbox } from "../../tests/_support/sandbox.ts";
import { delay, waitUntil } from "../../tests/_support/wait.ts";
import { intFlag, Report } from "./report.ts";
import { journalFacts } from "./state_facts.ts";

const CLIENTS = intFlag(Deno.args, "clients", 20);
const KILL_AFTER = 100;
const AFTER_KILL = 3;
/** How long an in-flight call may take to fail once the kernel is gone. */
const ERROR_WITHIN_MS = 15_000;
const CALL = { timeout: 120_000 };

const box = await sandbox();
const socket = box.socket();
const load = `${CLIENTS} facades, 1 exec in flight each, kill after ${KILL_AFTER} successes`;
const report = new Report(`kernel killed under load: ${load}`);
const clients: Mcp[] = [];
try {
  for (let c = 0; c < CLIENTS; c++) {
    clients.push(await connectMcp(box, { SHOAL_SOCKET: socket, SHOAL_SESSION: `k${c}` }));
  }
  const first = kernelPid(socket);
  let successes = 0;
  let killedAt = 0;
  /** Calls in flight when the kernel was killed: when each settled, and its error. */
  const atKill: { c: number; settled: number; error: string | null }[] = [];
  const inFlight = new Map<number, { c: number; settled: number; error: string | null }>();
  /** Calls that failed without a clear bridge error, or after their client had seen one. */
  const bad: string[] = [];
  const postKill: number[] = Array(CLIENTS).fill(0);
  const clearError = (e: unknown) =>
    e instanceof McpError && e.code === -32603 &&
    /kernel (disconnected|unavailable)/.test(e.message);
  const loop = async (mcp: Mcp, c: number) => {
    let sawError = false;
    for (let i = 0; postKill[c] < AFTER_KILL && i < 1000; i++) {
      const call = { c, settled: 0, error: null as string | null };
      if (killedAt === 0) inFlight.set(c, call);
      try {
        const reply = await mcp.call("shoal_exec", { src: `sleep 0.2; echo k${c}-${i}` }, CALL);
        if (reply.isError) throw new Error(JSON.stringify(reply.structuredContent));
        successes++;
        if (killedAt !== 0) postKill[c]++;
      } catch (e) {
        call.error = e instanceof McpError ? e.message : String(e);
        if (!clearError(e) || killedAt === 0 || sawError) {
          bad.push(`client ${c} exec ${i}${sawError ? " (after an error)" : ""}: ${call.error}`);
        }
        sawError = true;
      }
      call.settled = performance.now();
      inFlight.delete(c);
      if (killedAt === 0 && successes >= KILL_AFTER) {
        killedAt = performance.now();
        atKill.push(...inFlight.values());
        Deno.kill(first, "SIGKILL");
      }
    }
  };
  await Promise.all(clients.map(loop));
  const failed = atKill.filter((call) => call.error !== null).length;
  const slowest = Math.max(...atKill.map((call) => call.settled - killedAt));
  report.add(
    "in-flight calls answered or failed within bound",
    `all, ≤ ${ERROR_WITHIN_MS} ms`,
    `${atKill.length} (${failed} failed), slowest ${slowest.toFixed(0)} ms`,
    atKill.length > 0 && slowest <= ERROR_WITHIN_MS,
    load,
  );
  report.add(
    "calls failing unclearly or after a first error",
    "0",
    bad.length,
    bad.length === 0,
    load,
  );
  for (const line of bad.slice(0, 5)) console.log(`  ${line}`);
  // Kernels that lost the race exit by themselves (status 3); give them a moment.
  await waitUntil(() => kernelPids(socket).length <= 1, 10_000);
  const serving = kernelPids(socket);
  const connected = serving.length === 1 ? kernelConnections(serving[0], socket) : 0;
  report.add(
    "kernels serving after every facade ran again",
    "1, all facades on it",
    `${serving.length} (${connected} facade connections)`,
    serving.length === 1 && serving[0] !== first && connected === CLIENTS,
    load,
  );
  await Promise.all(clients.map((mcp) => mcp.close()));
  clients.length = 0;
  for (const pid of serving) Deno.kill(pid, "SIGTERM");
  await waitUntil(() => !serving.some(processLive), 10_000);
  const journal = journalFacts(`${box.dir}/state/shoal`);
  report.add(
    "PRAGMA integrity_check",
    "ok",
    journal.integrity.join(" "),
    journal.integrity.join(" ") === "ok",
    load,
  );
  report.add(
    "finished journal rows = execs reported ok",
    `= ${successes}`,
    `${journal.finished} (${journal.rows - journal.finished} unfinished)`,
    journal.finished === successes,
    load,
  );
  report.add(
    "journal seq continuous (last seq + 1)",
    `= ${journal.finished}`,
    journal.lastSeq + 1,
    journal.lastSeq + 1 === journal.finished,
    load,
  );
} finally {
  await Promise.all(clients.map((mcp) => mcp.close().catch(() => {})));
  if (Deno.env.get("STRESS_LOG")) {
    console.log(Deno.readTextFileSync(`${box.dir}/state/shoal/kernel.log`));
  }
  for (const pid of kernelPids(socket)) Deno.kill(pid, "SIGKILL");
  await delay(100);
  await box.cleanup();
  report.finish();
}
