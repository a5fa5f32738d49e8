import { BlobValue } from "./blob_value.ts";

/**
 * The kernel's internal value model. JSON-derived data stays in plain, compact JS form and is
 * converted to tagged wire form (V-TAG-1) only for what a call returns:
 *
 * | JS form | tag |
 * |---|---|
 * | `null`, `boolean` | `null`, `bool` |
 * | integral `number` | `int` (always within ±(2^53−1)) |
 * | non-integral `number`, {@link IntegralFloat} | `float` |
 * | `string`, or a str {@link BlobValue} | `str` |
 * | `Uint8Array`, or a bytes {@link BlobValue} | `bytes` |
 * | `Value[]`, {@link TableRows} | `list` |
 * | `Map<string, Value>` (member order = source order) | `record` |
 * | {@link Table}, {@link Duration}, {@link DateTime}, {@link Outcome} | `table`, `duration`, `datetime`, `outcome` |
 *
 * Values are never mutated once built. In-memory str/bytes are at most INLINE_VALUE_LIMIT bytes
 * when they come from a capture; larger ones are {@link BlobValue}s read lazily from the CAS.
 */
export type Value =
  | null
  | boolean
  | number
  | IntegralFloat
  | string
  | Uint8Array
  | BlobValue
  | Value[]
  | TableRows
  | Map<string, Value>
  | Table
  | Duration
  | DateTime
  | Outcome;

/** The `$` tags the bash kernel produces (V-TAG-1). */
export type Tag =
  | "null"
  | "bool"
  | "int"
  | "float"
  | "str"
  | "bytes"
  | "duration"
  | "datetime"
  | "list"
  | "record"
  | "table"
  | "outcome";

/** A float whose value is integral (`1.0`, `1e3`, `2^60`); other floats are plain numbers. */
export class IntegralFloat {
  constructor(readonly v: number) {}
}

/** A columnar table: column names in first-appearance order, one cell array of length `n` each. */
export class Table {
  constructor(
    readonly cols: readonly string[],
    readonly columns: readonly Value[][],
    readonly n: number,
  ) {}

  /** The cells of a column, or undefined when there is no such column. */
  column(name: string): Value[] | undefined {
    const i = this.cols.indexOf(name);
    return i < 0 ? undefined : this.columns[i];
  }

  /** Row `i` as a record holding every column. */
  row(i: number): Map<string, Value> {
    const record = new Map<string, Value>();
    for (let c = 0; c < this.cols.length; c++) record.set(this.cols[c], this.columns[c][i]);
    return record;
  }

  /** Rows `[a, b)`, for `0 <= a <= b <= n`. */
  slice(a: number, b: number): Table {
    return new Table(this.cols, this.columns.map((cells) => cells.slice(a, b)), b - a);
  }
}

/** A table's rows seen as a list of records (path `.rows`), built one row at a time. */
export class TableRows {
  constructor(readonly table: Table) {}
}

/** A duration in ns (path `.dur_ns` of an outcome). */
export class Duration {
  constructor(readonly ns: number) {}
}

/** An instant as an RFC 3339 UTC string ending in `Z` (V-TAG-1). */
export class DateTime {
  constructor(readonly iso: string) {}
}

/** The outcome of one bash exec (K-BASH-9). */
export class Outcome {
  constructor(
    /** Exit status, or null when bash was killed by a signal. */
    readonly status: number | null,
    /** Signal name when bash was killed, else null. */
    readonly signal: string | null,
    /** Stdout converted by K-BASH-10. */
    readonly out: Value,
    /** Stderr as str or bytes; also the raw `stderr` stream. */
    readonly err: Value,
    /** Stdout as str or bytes, never JSON-parsed (path `.stdout`). */
    readonly stdout: Value,
    readonly durNs: number,
    readonly pid: number,
    /** The source, at most 256 scalars plus `…`. */
    readonly cmd: string,
    /** Whether a stream hit the capture cap. */
    readonly truncated: boolean,
    /** The `host:port`s the proxy refused during the exec (P-NET-2), distinct, at most 100. */
    readonly netRefused: readonly string[] = [],
  ) {}

  /** `status == 0`. */
  get ok(): boolean {
    return this.status === 0;
  }
}

/** The `$` tag of a value. */
export function tagOf(v: Value): Tag {
  if (v === null) return "null";
  switch (typeof v) {
    case "boolean":
      return "bool";
    case "number":
      return Number.isInteger(v) ? "int" : "float";
    case "string":
      return "str";
  }
  if (v instanceof IntegralFloat) return "float";
  if (v instanceof Uint8Array) return "bytes";
  if (v instanceof BlobValue) return v.kind;
  if (Array.isArray(v) || v instanceof TableRows) return "list";
  if (v instanceof Map) return "record";
  if (v instanceof Table) return "table";
  if (v instanceof Duration) return "duration";
  if (v instanceof DateTime) return "datetime";
  return "outcome";
}

/** A list in either form. */
export type List = Value[] | TableRows;

/** Whether a value is a list. */
export function isList(v: Value): v is List {
  return Array.isArray(v) || v instanceof TableRows;
}

/** Number of items of a list. */
export function listLength(list: List): number {
  return Array.isArray(list) ? list.length : list.table.n;
}

/** Item `i` of a list (`0 <= i < length`). */
export function listItem(list: List, i: number): Value {
  return Array.isArray(list) ? list[i] : list.table.row(i);
}

/** Items `[a, b)` of a list, for `0 <= a <= b <= length`. */
export function listSlice(list: List, a: number, b: number): List {
  return Array.isArray(list) ? list.slice(a, b) : new TableRows(list.table.slice(a, b));
}
