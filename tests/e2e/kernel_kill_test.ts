/** End to end: the kernel killed with SIGKILL under several facades (issue 13). */
import assert from "node:assert/strict";
import { DatabaseSync } from "node:sqlite";
import { connectMcp, type Mcp, mcpError } from "./_mcp.ts";
import {
  kernelConnections,
  kernelPid,
  kernelPids,
  pidsMentioning,
  processLive,
} from "../_support/proc.ts";
import { sandbox } from "../_support/sandbox.ts";
import { waitUntil } from "../_support/wait.ts";

const FACADES = 4;

Deno.test("kill -9 of the kernel: the call in flight fails with -32603, the next calls of every facade autostart exactly one kernel, the journal is intact and its seq continues (M-START-4, G-SOCK-4, J-5)", async () => {
  const box = await sandbox();
  const socket = box.socket();
  const clients: Mcp[] = [];
  const marker = `sleep 30.${Deno.pid}`;
  try {
    for (let c = 0; c < FACADES; c++) {
      clients.push(await connectMcp(box, { SHOAL_SOCKET: socket, SHOAL_SESSION: `s${c}` }));
    }
    let succeeded = 0;
    for (const mcp of clients) {
      await mcp.ok("shoal_exec", { src: "echo before" });
      succeeded++;
    }
    // A kernel another facade started meanwhile finds the socket served and exits by itself
    // (status 3), on a loaded host not at once; kernelPid names what is left after the wait.
    await waitUntil(() => kernelPids(socket).length === 1, 10000);
    const first = kernelPid(socket);
    const inFlight = mcpError(clients[0].call("shoal_exec", { src: marker }));
    assert.ok(await waitUntil(() => pidsMentioning(marker).length > 0, 20000), "the run started");
    Deno.kill(first, "SIGKILL");
    const e = await inFlight;
    assert.equal(e.code, -32603);
    assert.match(e.message, /kernel disconnected/);
    assert.ok(await waitUntil(() => !processLive(first), 10000));

    // Every facade calls at once; one that has not yet seen the drop may fail once, clearly.
    await Promise.all(clients.map(async (mcp) => {
      const reply = await mcp.call("shoal_exec", { src: "echo after" }).catch((e) => {
        assert.match(String(e), /-32603.*kernel (disconnected|unavailable)/);
        return mcp.call("shoal_exec", { src: "echo after" });
      });
      assert.equal(reply.isError, false, JSON.stringify(reply.structuredContent));
      succeeded++;
    }));
    // Kernels that lost the race exit by themselves (status 3).
    assert.ok(
      await waitUntil(() => kernelPids(socket).length === 1, 10000),
      `${kernelPids(socket)}`,
    );
    const [second] = kernelPids(socket);
    assert.notEqual(second, first);
    assert.equal(kernelConnections(second, socket), FACADES, "every facade on the one kernel");

    const db = new DatabaseSync(`${box.dir}/state/shoal/journal.db`, { readOnly: true });
    try {
      const rows = (sql: string) => Number(db.prepare(sql).get()!.n);
      assert.deepEqual(db.prepare("PRAGMA integrity_check").all().map((r) => r.integrity_check), [
        "ok",
      ]);
      assert.equal(rows("SELECT count(*) AS n FROM entries WHERE dur_ns IS NOT NULL"), succeeded);
      assert.equal(
        rows("SELECT count(*) AS n FROM entries WHERE dur_ns IS NULL"),
        1,
        "the killed run",
      );
      const seqs = db.prepare("SELECT seq FROM events WHERE channel = 'journal' ORDER BY seq")
        .all().map((r) => Number(r.seq));
      assert.deepEqual(seqs, Array.from({ length: succeeded }, (_, i) => i));
    } finally {
      db.close();
    }
  } finally {
    await Promise.all(clients.map((mcp) => mcp.close().catch(() => {})));
    for (const pid of pidsMentioning(marker)) Deno.kill(pid, "SIGKILL");
    await box.cleanup();
  }
});
