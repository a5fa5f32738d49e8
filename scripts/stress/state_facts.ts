/**
 * What a kernel's state directory holds, read from outside the kernel (issue 13): journal rows
 * and `journal` seq through SQLite, `PRAGMA integrity_check`, spool orphans under `tmp/` and CAS
 * blobs whose bytes do not match their name.
 */
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { DatabaseSync } from "node:sqlite";

/** Journal figures of `<state>/journal.db`. */
export interface JournalFacts {
  /** Every row. */
  rows: number;
  /** Rows completed by their run (`dur_ns` set). */
  finished: number;
  /** The highest stored seq of the `journal` channel (-1 when none). */
  lastSeq: number;
  /** `PRAGMA integrity_check` lines (`["ok"]` when intact). */
  integrity: string[];
  /** Finished rows with their `ok` verdict and stdout hash, by source. */
  bySrc: Map<string, { ok: boolean | null; stdout: string | null }>;
}

/** Reads the journal of a state directory (read-only; the kernel may be running). */
export function journalFacts(stateDir: string): JournalFacts {
  const db = new DatabaseSync(`${stateDir}/journal.db`, { readOnly: true });
  try {
    db.exec("PRAGMA busy_timeout = 5000");
    const count = (sql: string) => Number((db.prepare(sql).get() as { n: number }).n);
    const bySrc = new Map<string, { ok: boolean | null; stdout: string | null }>();
    for (const row of db.prepare("SELECT src, ok, outputs FROM entries").all()) {
      const outputs = row.outputs === null
        ? []
        : JSON.parse(row.outputs as string) as { kind: string; hash: string }[];
      bySrc.set(row.src as string, {
        ok: row.ok === null ? null : row.ok === 1,
        stdout: outputs.find((o) => o.kind === "stdout")?.hash ?? null,
      });
    }
    return {
      rows: count("SELECT count(*) AS n FROM entries"),
      finished: count("SELECT count(*) AS n FROM entries WHERE dur_ns IS NOT NULL"),
      lastSeq: count("SELECT coalesce(max(seq), -1) AS n FROM events WHERE channel = 'journal'"),
      integrity: db.prepare("PRAGMA integrity_check").all().map((r) => String(r.integrity_check)),
      bySrc,
    };
  } finally {
    db.close();
  }
}

/**
 * Spool orphans: entries of `<state>/tmp` other than the kernel's scratch directories
 * (`run-*`, reused by later runs and removed at shutdown). After every run has ended, a spool
 * or staging file left there belongs to nothing. Pass `scratchToo` once the kernel has stopped.
 */
export function spoolOrphans(stateDir: string, scratchToo = false): string[] {
  const names: string[] = [];
  for (const entry of Deno.readDirSync(`${stateDir}/tmp`)) {
    if (scratchToo || !entry.name.startsWith("run-")) names.push(entry.name);
  }
  return names;
}

/** CAS figures: how many blobs, and which of them do not hash to their name (partial writes). */
export function casFacts(stateDir: string): { blobs: number; bad: string[] } {
  let blobs = 0;
  const bad: string[] = [];
  const walk = (dir: string) => {
    for (const entry of Deno.readDirSync(dir)) {
      const path = `${dir}/${entry.name}`;
      if (entry.isDirectory) walk(path);
      else {
        blobs++;
        const hex = createHash("sha256").update(readFileSync(path)).digest("hex");
        if (hex !== entry.name) bad.push(path);
      }
    }
  };
  walk(`${stateDir}/cas`);
  return { blobs, bad };
}
