import type { PathObject } from "../values/path_object.ts";

/** One effect as derived by the effects analysis (K-EFF-1): `kind` plus its members. */
export interface JournalEffect {
  kind: string;
  [member: string]: unknown;
}

/** One recorded output of a finished run (J-3). */
export interface JournalOutput {
  kind: "stdout" | "stderr" | "render";
  hash: string;
  len: number;
}

/** What is known when a run starts (J-2); `head` and `opaque` are derived from it. */
export interface JournalStart {
  session: string;
  principal: string;
  /** Start time, ns since the epoch. */
  ts_ns: bigint;
  /** Raw bytes of the start cwd. */
  cwd: Uint8Array;
  src: string;
  /** Canonical effect list (K-EFF-4). */
  effects: readonly JournalEffect[];
  /** Who approved the plan this run applies (K-PLAN-3, M-ELICIT-1); absent or null otherwise. */
  approved_by?: string | null;
}

/** What is known when a run ends (J-2, J-3). */
export interface JournalFinish {
  dur_ns: bigint;
  /** Exit status, or null when bash was killed by a signal. */
  status: number | null;
  ok: boolean;
  outputs: readonly JournalOutput[];
}

/**
 * A journal row in its wire shape (K-JQ-4). `ts` and `dur_ns` are bigints because ns values
 * exceed 2^53: the kernel's JSON encoder must write them as exact integers (W-NUM-1).
 * Unfinished rows have `dur_ns`, `status` and `ok` null and no outputs. `src` is cut to 16384
 * bytes (ending in `…`), and `effects` are reported bounded (K-JQ-4, K-EFF-7).
 */
export interface JournalEntry {
  id: number;
  session: string;
  principal: string;
  ts: bigint;
  dur_ns: bigint | null;
  cwd: PathObject;
  src: string;
  effects: JournalEffect[];
  /** How many effects beyond the first 100 were left out (K-JQ-4, K-EFF-7); absent when none were. */
  effects_more?: number;
  /** Who approved the plan the row ran (M-ELICIT-1); absent for runs of no approved plan. */
  approved_by?: string;
  status: number | null;
  ok: boolean | null;
  opaque: boolean;
  outputs: JournalOutput[];
}

/** Whose rows a `journal.query` caller may see (K-JQ-3). */
export interface JournalScope {
  principal: string;
  /** The caller's policy grants `journal_read`: it sees every principal's rows. */
  journalRead: boolean;
}
