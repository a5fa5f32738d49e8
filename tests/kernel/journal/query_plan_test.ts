import assert from "node:assert/strict";
import { DatabaseSync } from "node:sqlite";
import type { JournalScope } from "../../../src/kernel/journal/entry.ts";
import { Journal } from "../../../src/kernel/journal/journal.ts";
import { journalQueryParams } from "../../../src/kernel/journal/query_params.ts";
import { journalQuerySql } from "../../../src/kernel/journal/query_sql.ts";

const encoder = new TextEncoder();
const AGENT: JournalScope = { principal: "agent:a", journalRead: false };
const READER: JournalScope = { principal: "agent:reader", journalRead: true };

/** Every filter of K-JQ-1 but principal, with a value. */
const FILTERS: Record<string, unknown> = {
  since: 0,
  until: Number.MAX_SAFE_INTEGER,
  head: "git",
  ok: true,
  effects: ["proc_spawn"],
};

/** Each subset of {@link FILTERS}, as `journal.query` params. */
function everyFilterSet(): Record<string, unknown>[] {
  const names = Object.keys(FILTERS);
  return Array.from({ length: 2 ** names.length }, (_, bits) =>
    Object.fromEntries(
      names.filter((_, i) => bits & (1 << i)).map((name) => [name, FILTERS[name]]),
    ));
}

/** A journal with the human's `git` rows and, older than them, two of agent:a's. */
async function withJournal(fn: (dir: string) => void): Promise<void> {
  const dir = await Deno.makeTempDir();
  const journal = Journal.open(dir);
  try {
    journal.batch(() => {
      for (let i = 0; i < 202; i++) {
        const id = journal.start({
          session: "work",
          principal: i < 2 ? "agent:a" : "uid:1000",
          ts_ns: 1767225600000000000n + BigInt(i),
          cwd: encoder.encode("/tmp"),
          src: `git status ${i}`,
          effects: [{ kind: "proc_spawn", argv0: "git", bin_hash: null }],
        });
        journal.finish(id, { dur_ns: 1n, status: 0, ok: true, outputs: [] });
      }
    });
  } finally {
    journal.close();
  }
  try {
    fn(dir);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

/** The lines of EXPLAIN QUERY PLAN for `journal.query` `params` by a caller of `scope`. */
function plan(db: DatabaseSync, params: Record<string, unknown>, scope: JournalScope): string[] {
  const { sql, args } = journalQuerySql(journalQueryParams.parse(params), scope);
  return db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(...args).map((row) => String(row.detail));
}

/**
 * Asserts that the plan reads agent:a's rows by their principal (and head), newest first from
 * the index: no whole-table scan, no walk through an index of every principal's rows, no sort.
 */
function assertReadsOnePrincipal(lines: string[], params: Record<string, unknown>): void {
  const key = params.head === undefined ? "(principal=?)" : "(principal=? AND head=?)";
  const what = `${JSON.stringify(params)}: ${lines.join(" | ")}`;
  const entries = lines.filter((line) => / entries /.test(line));
  assert.equal(entries.length, 1, what);
  assert.match(entries[0], /^SEARCH entries USING (COVERING )?INDEX entries_by_principal/, what);
  assert.ok(entries[0].endsWith(key), what);
  assert.ok(lines.every((line) => !line.startsWith("SCAN") && !line.includes("TEMP B-TREE")), what);
}

Deno.test("K-JQ-3 a query of one principal's rows reads that principal's rows only, whatever its filters: an agent's journal.query {head: 'git', limit: 1} walked the human's 1,000,000 git rows through entries_by_head to find its own (413 ms of the kernel's event loop)", async () => {
  await withJournal((dir) => {
    const db = new DatabaseSync(`${dir}/journal.db`, { readOnly: true });
    try {
      for (const filters of everyFilterSet()) {
        assertReadsOnePrincipal(plan(db, filters, AGENT), filters);
        const named = { ...filters, principal: "agent:a" };
        assertReadsOnePrincipal(plan(db, named, READER), named);
      }
    } finally {
      db.close();
    }
  });
});

Deno.test("K-JQ-3 a journal written before entries_by_principal_head existed gets it on open, and its agent's head queries read only that agent's rows", async () => {
  await withJournal((dir) => {
    const old = new DatabaseSync(`${dir}/journal.db`);
    old.exec("DROP INDEX IF EXISTS entries_by_principal_head");
    old.close();
    const journal = Journal.open(dir);
    try {
      const rows = journal.query(journalQueryParams.parse({ head: "git" }), AGENT);
      assert.deepEqual(rows.map((row) => [row.id, row.principal]), [[2, "agent:a"], [
        1,
        "agent:a",
      ]]);
    } finally {
      journal.close();
    }
    const db = new DatabaseSync(`${dir}/journal.db`, { readOnly: true });
    try {
      assertReadsOnePrincipal(plan(db, { head: "git" }, AGENT), { head: "git" });
    } finally {
      db.close();
    }
  });
});
