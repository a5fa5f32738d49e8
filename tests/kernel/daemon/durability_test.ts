import assert from "node:assert/strict";
import { DatabaseSync } from "node:sqlite";
import type { RpcConnection } from "../../../src/protocol/rpc_client.ts";
import { startKernel, type TestKernel } from "../../_support/kernel.ts";
import type { Rec } from "../../_support/rec.ts";
import { sandbox } from "../../_support/sandbox.ts";
import { waitUntil } from "../../_support/wait.ts";

const EXECS = 100;
const KILL_AFTER = 50;
/** Execs kept in flight at once, so the kill lands while rows are being written. */
const IN_FLIGHT = 4;

/** Runs `echo run-<i>` for i in 0..99 from one connection; SIGKILLs the kernel after 50 results. */
async function execLoop(conn: RpcConnection, kill: () => void): Promise<Set<string>> {
  const returned = new Set<string>();
  let next = 0;
  const worker = async () => {
    while (next < EXECS) {
      const src = `echo run-${next++}`;
      try {
        await conn.request("exec", { src });
      } catch {
        return; // the kernel died under this request
      }
      returned.add(src);
      if (returned.size === KILL_AFTER) kill();
    }
  };
  await Promise.all(Array.from({ length: IN_FLIGHT }, worker));
  return returned;
}

/** Every event of a channel, oldest first. */
async function allEvents(conn: RpcConnection, channel: string): Promise<Rec[]> {
  const read = await conn.request("events.read", { channel, since: -1, limit: 10000 }) as Rec;
  return read.events as Rec[];
}

Deno.test("kill -9 during 100 execs: every returned exec has its finished row, the db is intact and journal seq continues (J-1, J-5, J-6, K-EVT-7)", async () => {
  const box = await sandbox();
  const first = await startKernel([], box);
  let second: TestKernel | undefined;
  try {
    const conn = await first.attach();
    const returned = await execLoop(conn, () => first.child.kill("SIGKILL"));
    assert.equal((await first.child.status).signal, "SIGKILL");
    await first.stop();
    assert.ok(returned.size >= KILL_AFTER && returned.size < EXECS, `${returned.size} returned`);

    second = await startKernel([], box);
    const after = await second.attach();
    const rows = await after.request("journal.query", { limit: 1000 }) as Rec[];
    const finished = new Map(rows.filter((r) => r.ok !== null).map((r) => [r.src, r]));
    for (const src of returned) {
      const row = finished.get(src);
      assert.ok(row, `no finished row for ${src}`);
      assert.equal(row.ok, true);
      assert.equal(row.status, 0);
      assert.equal((row.outputs as Rec[])[0].kind, "stdout");
    }
    // Rows started but not finished before the kill stay unfinished; none is duplicated.
    assert.equal(new Set(rows.map((r) => r.src)).size, rows.length);
    assert.ok(rows.every((r) => r.ok !== null || (r.dur_ns === null && r.status === null)));

    const db = new DatabaseSync(`${box.dir}/state/shoal/journal.db`, { readOnly: true });
    try {
      const check = db.prepare("PRAGMA integrity_check").all().map((r) => r.integrity_check);
      assert.deepEqual(check, ["ok"]);
    } finally {
      db.close();
    }

    // journal events were stored with their rows: seq 0..n-1, one per finished row.
    const journal = await allEvents(after, "journal");
    const seqs = journal.map((e) => e.seq as number);
    assert.deepEqual(seqs, seqs.map((_, i) => i));
    assert.equal(seqs.length, finished.size);
    const announced = new Set(journal.map((e) => (e.payload as Rec).entry_id));
    for (const row of finished.values()) assert.ok(announced.has(row.id), `no event for ${row.id}`);
    const transcript = (await allEvents(after, "session.transcript")).map((e) => e.seq as number);
    assert.deepEqual(transcript, transcript.map((_, i) => i));
    assert.ok(transcript.length >= KILL_AFTER);

    // The next events continue both durable channels' seq without reuse.
    const pushes: Rec[] = [];
    after.onNotification = (_method, params) => pushes.push(params);
    await after.request("events.subscribe", { channel: "journal" });
    await after.request("events.subscribe", { channel: "session.transcript" });
    await after.request("exec", { src: "echo after-restart" });
    assert.ok(await waitUntil(() => pushes.length === 2, 10000), JSON.stringify(pushes));
    assert.deepEqual(pushes.map((e) => [e.channel, e.seq]).sort(), [
      ["journal", seqs.length],
      ["session.transcript", transcript.length],
    ]);
  } finally {
    await first.stop();
    if (second) await second.cleanup();
    else await box.cleanup();
  }
});
