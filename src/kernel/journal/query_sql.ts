import type { SQLInputValue } from "node:sqlite";
import { ErrorCode, RpcError } from "../../protocol/errors.ts";
import { JOURNAL_SRC_BYTES, NS_FILTER_SLACK } from "../../protocol/limits.ts";
import type { JournalScope } from "./entry.ts";
import type { JournalQuery } from "./query_params.ts";

// Sources and heads are read as bytes: SQLite stores a NUL character inside text, and bash
// skips it and runs what follows, but text read back ends at it. JOURNAL_SRC_BYTES + 4 bytes
// hold every character of the first JOURNAL_SRC_BYTES bytes and tell whether there is more,
// which is all a row needs to cut a source (K-JQ-4).
const ENTRY_COLUMNS = `id, session, principal, ts_ns, dur_ns, cwd,
  substr(CAST(src AS BLOB), 1, ${JOURNAL_SRC_BYTES + 4}) AS src, effects, status, ok, opaque,
  outputs, approved_by`;

const SAFE_NS = BigInt(Number.MAX_SAFE_INTEGER);
const SLACK = BigInt(NS_FILTER_SLACK);
const I64_MAX = 2n ** 63n - 1n;
const I64_MIN = -(2n ** 63n);

/** One SQL statement and its arguments. */
export interface BoundSql {
  sql: string;
  args: SQLInputValue[];
}

/**
 * The one SQL query of a `journal.query` (K-JQ-1..3): every filter and the limit, newest first.
 * Callers without `journal_read` see only their own rows; naming another principal is `-32010`.
 * A query of one principal's rows reads them through that principal's index, so it costs in
 * proportion to that principal's rows, however many others the journal holds.
 */
export function journalQuerySql(query: JournalQuery, scope: JournalScope): BoundSql {
  let principal = query.principal ?? undefined;
  if (!scope.journalRead) {
    if (principal !== undefined && principal !== scope.principal) {
      throw new RpcError(
        ErrorCode.LEASH_DENIED,
        "journal_read is not granted: only your own rows can be queried",
        { reason: "journal_scope" },
      );
    }
    principal = scope.principal;
  }
  const where: string[] = [];
  const args: SQLInputValue[] = [];
  const filter = (clause: string, value: SQLInputValue) => {
    where.push(clause);
    args.push(value);
  };
  if (query.since != null) filter("ts_ns >= ?", widen(query.since, -SLACK));
  if (query.until != null) filter("ts_ns <= ?", widen(query.until, SLACK));
  if (principal !== undefined) filter("principal = ?", principal);
  if (query.head != null) filter("head = ?", query.head);
  if (query.ok != null) filter("ok = ?", query.ok ? 1 : 0);
  for (const kind of query.effects) {
    filter(
      "EXISTS (SELECT 1 FROM entry_effects WHERE entry_id = entries.id AND kind = ?)",
      kind,
    );
  }
  // Left to itself, SQLite took entries_by_head for `{head: "git"}` and walked every principal's
  // git rows to find the caller's few (413 ms at 1,000,000 of the human's rows). Both
  // principal indexes end in id: rows come newest first from the index and the limit ends the walk.
  const index = principal === undefined
    ? ""
    : `INDEXED BY ${query.head != null ? "entries_by_principal_head" : "entries_by_principal"}`;
  args.push(query.limit);
  return {
    sql: `SELECT ${ENTRY_COLUMNS} FROM entries ${index}
      ${where.length ? `WHERE ${where.join(" AND ")}` : ""}
      ORDER BY id DESC LIMIT ?`,
    args,
  };
}

/**
 * Moves a bound outward by `slack` when it is beyond exact double precision (W-NUM-1), staying
 * within the signed 64-bit range SQLite binds.
 */
function widen(bound: bigint, slack: bigint): bigint {
  if (bound <= SAFE_NS && bound >= -SAFE_NS) return bound;
  const widened = bound + slack;
  return widened > I64_MAX ? I64_MAX : widened < I64_MIN ? I64_MIN : widened;
}
