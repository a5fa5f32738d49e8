// Issue 33: once the kernel falls idle it copies the journal's WAL into journal.db, so the exec
// that passes SQLite's automatic checkpoint threshold (every ~100 execs) no longer waits on its
// fsyncs, and journal.db alone holds the rows of a burst.
import assert from "node:assert/strict";
import { DatabaseSync } from "node:sqlite";
import { startKernel } from "../../_support/kernel.ts";
import { waitUntil } from "../../_support/wait.ts";

/**
 * The finished rows in a copy of `journal.db` alone (no WAL beside it), made in `scratch`: none
 * while even the schema is only in the WAL.
 */
function rowsInMainFile(state: string, scratch: string): number {
  Deno.copyFileSync(`${state}/journal.db`, `${scratch}/copy.db`);
  const db = new DatabaseSync(`${scratch}/copy.db`);
  try {
    const tables = db.prepare("SELECT count(*) AS n FROM sqlite_master WHERE name = 'entries'");
    if ((tables.get() as { n: number }).n === 0) return 0;
    const row = db.prepare("SELECT count(*) AS n FROM entries WHERE dur_ns IS NOT NULL").get();
    return Number((row as { n: number }).n);
  } finally {
    db.close();
  }
}

Deno.test("J-1 an idle kernel has checkpointed its journal: journal.db alone holds a burst's rows", async () => {
  const kernel = await startKernel();
  try {
    const conn = await kernel.attach("work");
    for (let i = 0; i < 10; i++) await conn.request("exec", { src: `echo ${i}` });
    conn.close();
    const state = `${kernel.box.dir}/state/shoal`;
    const scratch = await Deno.makeTempDir({ dir: kernel.box.dir });
    // the idle work runs 2-4 s after the last request (protocol/idle_work.ts)
    const held = await waitUntil(() => rowsInMainFile(state, scratch) >= 10, 15_000);
    assert.ok(held, `journal.db alone holds ${rowsInMainFile(state, scratch)} of the 10 rows`);
  } finally {
    await kernel.cleanup();
  }
});
