// A journal.db removed under a running kernel (its user clearing the state directory to start
// afresh, or moving the journal aside): the rows of later runs must still be there after a
// restart (J-5), and the durable channels' seq go on rising for those who follow them (K-EVT-7).
import assert from "node:assert/strict";
import { DatabaseSync } from "node:sqlite";
import { launchKernel, startKernel } from "../../_support/kernel.ts";
import type { Rec } from "../../_support/rec.ts";
import { collectEvents } from "../../_support/events.ts";
import { removeTree } from "../../_support/remove_tree.ts";
import { waitUntil } from "../../_support/wait.ts";

for (const removed of ["the state directory", "journal.db and its -wal and -shm"]) {
  Deno.test(`J-5/K-EVT-7 runs after ${removed} was removed under a running kernel keep their rows across a restart, and the journal's ids and event seqs keep rising`, async () => {
    const k = await startKernel();
    const state = `${k.box.dir}/state/shoal`;
    try {
      const conn = await k.attach();
      const events = collectEvents(conn);
      await conn.request("events.subscribe", { channel: "journal" });
      const [before] = await conn.request("exec", { src: "echo before" }).then(() =>
        conn.request("journal.query", {})
      ) as Rec[];
      if (removed === "the state directory") {
        removeTree(state);
      } else {
        for (const suffix of ["", "-wal", "-shm"]) Deno.removeSync(`${state}/journal.db${suffix}`);
      }
      await conn.request("exec", { src: "echo after-1" });
      await conn.request("exec", { src: "echo after-2" });
      const rows = await conn.request("journal.query", {}) as Rec[];
      assert.deepEqual(rows.map((r) => r.src), ["echo after-2", "echo after-1"]);
      assert.ok(rows.every((r) => (r.id as number) > (before.id as number)), JSON.stringify(rows));
      assert.ok(await waitUntil(() => events.length === 3, 10000), JSON.stringify(events));
      const seqs = events.map((e) => e.seq as number);
      assert.ok(seqs[0] < seqs[1] && seqs[1] < seqs[2], `journal seqs ${seqs}`);
      assert.equal(await k.stop(), 0);

      const next = await launchKernel(k.box, ["--socket", k.socket], k.socket);
      try {
        const again = await next.attach();
        const kept = await again.request("journal.query", {}) as Rec[];
        assert.deepEqual(kept.map((r) => r.src), ["echo after-2", "echo after-1"]);
        assert.ok(kept.every((r) => r.ok === true));
      } finally {
        await next.stop();
      }
    } finally {
      await k.cleanup();
    }
  });
}

Deno.test("J-5 a run going on while journal.db is removed has its row finished in the new journal, found after a restart", async () => {
  const k = await startKernel();
  const state = `${k.box.dir}/state/shoal`;
  const flag = `${k.box.dir}/go`;
  try {
    const conn = await k.attach();
    const src = `until [ -e ${flag} ]; do sleep 0.05; done; echo late`;
    const { task } = await conn.request("exec", { src, async: true }) as Rec;
    for (const suffix of ["", "-wal", "-shm"]) Deno.removeSync(`${state}/journal.db${suffix}`);
    await conn.request("exec", { src: "echo meanwhile" });
    Deno.writeTextFileSync(flag, "");
    await conn.request("task.await", { task, timeout_ms: 30000 });
    assert.equal(await k.stop(), 0);
    const next = await launchKernel(k.box, ["--socket", k.socket], k.socket);
    try {
      // Started first, the run's row is carried over when the next exec finds the file gone.
      const rows = await (await next.attach()).request("journal.query", {}) as Rec[];
      assert.deepEqual(rows.map((r) => [r.src, r.ok]), [["echo meanwhile", true], [src, true]]);
    } finally {
      await next.stop();
    }
  } finally {
    await k.cleanup();
  }
});

for (const removed of ["journal.db", "journal.db and its -wal and -shm"]) {
  Deno.test(`J-5 rows written after ${removed} was removed outlive a SIGKILL of the kernel, in an intact journal`, async () => {
    const k = await startKernel();
    const state = `${k.box.dir}/state/shoal`;
    try {
      const conn = await k.attach();
      await conn.request("exec", { src: "echo before" });
      const suffixes = removed === "journal.db" ? [""] : ["", "-wal", "-shm"];
      for (const suffix of suffixes) Deno.removeSync(`${state}/journal.db${suffix}`);
      await conn.request("exec", { src: "echo after-1" });
      await conn.request("exec", { src: "echo after-2" });
      k.child.kill("SIGKILL");
      await k.stop();
      const next = await launchKernel(k.box, ["--socket", k.socket], k.socket);
      try {
        const rows = await (await next.attach()).request("journal.query", {}) as Rec[];
        assert.deepEqual(rows.map((r) => r.src), ["echo after-2", "echo after-1"]);
      } finally {
        await next.stop();
      }
      const db = new DatabaseSync(`${state}/journal.db`, { readOnly: true });
      try {
        assert.deepEqual(db.prepare("PRAGMA integrity_check").all().map((r) => r.integrity_check), [
          "ok",
        ]);
      } finally {
        db.close();
      }
    } finally {
      await k.cleanup();
    }
  });
}
