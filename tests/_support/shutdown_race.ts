/** Test support: SIGTERM to a kernel while a request is under way (G-SOCK-8). */
import assert from "node:assert/strict";
import type { RpcConnection } from "../../src/protocol/rpc_client.ts";
import { startKernel } from "./kernel.ts";
import { kernelPid, pidsMentioning, processLive } from "./proc.ts";
import { waitUntil } from "./wait.ts";

/**
 * For SIGTERMs 25, 75 and 150 ms into `late` (a request slow to analyse, sent after `first` was
 * answered), each on a kernel of its own: asserts that the kernel exits and that no process whose
 * command line holds the `marker` both are given outlives it (`what` names them in failures).
 */
export async function shutdownDuring(
  first: (conn: RpcConnection, marker: string) => Promise<unknown>,
  late: (conn: RpcConnection, marker: string) => Promise<unknown>,
  what: string,
): Promise<void> {
  for (const delayMs of [25, 75, 150]) {
    const marker = `shoal-shutdown-${crypto.randomUUID()}`;
    const k = await startKernel();
    const pid = kernelPid(k.socket);
    try {
      const conn = await k.attach();
      await first(conn, `${marker}-first`);
      const running = late(conn, `${marker}-late`).catch(() => null);
      await new Promise((r) => setTimeout(r, delayMs));
      Deno.kill(pid, "SIGTERM");
      await running;
      assert.ok(await waitUntil(() => !processLive(pid), 15000), `kernel still up (${delayMs} ms)`);
      assert.ok(
        await waitUntil(() => pidsMentioning(marker).length === 0, 5000),
        `${what} outlived the kernel (${delayMs} ms)`,
      );
    } finally {
      // the kernel's pid only while it lives: once it has exited, its pid may be another's (pids
      // wrap: pid_max is 32768 here), and a SIGKILL to it could end another test's process
      const left = processLive(pid) ? [pid] : [];
      for (const p of [...left, ...pidsMentioning(marker)]) {
        try {
          Deno.kill(p, "SIGKILL");
        } catch {
          // gone
        }
      }
      await k.cleanup();
    }
  }
}
