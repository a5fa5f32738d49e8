import { mkdirSync, statfsSync } from "node:fs";
import { DatabaseSync, type SQLInputValue, type StatementSync } from "node:sqlite";
import { JOURNAL_SRC_BYTES } from "../../protocol/limits.ts";
import { reportEffects } from "../policy/effect_report.ts";
import type { BusEvent } from "../events/bus_event.ts";
import { DURABLE_CHANNELS, type DurableLog, NARROWING_MEMBER } from "../events/durable_log.ts";
import { nowNs } from "../events/now_ns.ts";
import { pathObject } from "../values/path_object.ts";
import { utf8Decoder, utf8Length, utf8Prefix } from "../../protocol/utf8.ts";
import type {
  JournalEffect,
  JournalEntry,
  JournalFinish,
  JournalScope,
  JournalStart,
} from "./entry.ts";
import { headOf } from "./head.ts";
import { fileIdentity } from "../store/file_identity.ts";
import type { JournalQuery } from "./query_params.ts";
import { journalQuerySql } from "./query_sql.ts";

const SCHEMA = `
CREATE TABLE IF NOT EXISTS entries (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  session TEXT NOT NULL,
  principal TEXT NOT NULL,
  ts_ns INTEGER NOT NULL,
  dur_ns INTEGER,
  cwd BLOB NOT NULL,
  src TEXT NOT NULL,
  head TEXT NOT NULL,
  effects TEXT NOT NULL,
  status INTEGER,
  ok INTEGER,
  opaque INTEGER NOT NULL,
  outputs TEXT,
  approved_by TEXT
);
CREATE INDEX IF NOT EXISTS entries_by_principal ON entries (principal, id);
-- One principal's rows with one head, newest first, for journal.query (query_sql.ts): opening a
-- journal written before it existed adds it.
CREATE INDEX IF NOT EXISTS entries_by_principal_head ON entries (principal, head, id);
CREATE INDEX IF NOT EXISTS entries_by_head ON entries (head, id);
CREATE INDEX IF NOT EXISTS entries_by_ts ON entries (ts_ns);
CREATE TABLE IF NOT EXISTS entry_effects (
  entry_id INTEGER NOT NULL,
  kind TEXT NOT NULL,
  PRIMARY KEY (entry_id, kind)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS entry_effects_by_kind ON entry_effects (kind, entry_id);
CREATE TABLE IF NOT EXISTS events (
  channel TEXT NOT NULL,
  seq INTEGER NOT NULL,
  ts_ns INTEGER NOT NULL,
  payload TEXT NOT NULL,
  PRIMARY KEY (channel, seq)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS journal_events_by_principal
  ON events (json_extract(payload, '$.principal'), seq) WHERE channel = 'journal';
CREATE INDEX IF NOT EXISTS transcript_events_by_session
  ON events (json_extract(payload, '$.session'), seq) WHERE channel = 'session.transcript';
`;

/**
 * The index that finds a durable channel's events of one owner ({@link NARROWING_MEMBER}): a
 * caller who sees only its own should not make the kernel read every event ever stored.
 */
const NARROWING_INDEX: ReadonlyMap<string, string> = new Map([
  ["journal", "journal_events_by_principal"],
  ["session.transcript", "transcript_events_by_session"],
]);

const decoder = utf8Decoder();

/** The text of a column read as bytes; SQLite gives an empty text cast to a blob as null. */
function storedText(bytes: unknown): string {
  return bytes instanceof Uint8Array ? decoder.decode(bytes) : "";
}
type Row = Record<string, SQLInputValue>;

/** A row `finish` was asked to close that does not exist or was closed already. */
class UnknownEntry extends Error {
  constructor(id: number) {
    super(`journal entry ${id} is unknown or already finished`);
  }
}

/**
 * The durable journal (§6): one SQLite row per `run` exec, plus the stored events of the durable
 * channels `journal` and `session.transcript` (K-EVT-7). Every write is one transaction, so a
 * killed kernel leaves every finished row behind.
 */
export class Journal implements DurableLog {
  /** Prepared statements of the fixed SQL texts, by text: preparing costs more than running. */
  readonly #statements = new Map<string, StatementSync>();
  /** Rows of ended runs whose closing write failed ({@link leaveUnfinished}). */
  readonly #left = new Set<number>();
  /**
   * Rows started and not finished yet: the id {@link start} returned, and the row's id in the
   * open file, another once {@link #follow} carried the row over to a new file.
   */
  readonly #unfinished = new Map<number, number>();
  /** The seq each durable channel's events reached in files since removed ({@link #follow}). */
  readonly #seqFloor = new Map<string, number>();

  private constructor(
    private db: DatabaseSync,
    private readonly stateDir: string,
    /** The (device, inode) of the open file. */
    private identity: string,
  ) {}

  /**
   * Opens (creating if needed) `<stateDir>/journal.db`, mode 0600, WAL (J-1). A failure names
   * the file: "file is not a database" alone left its reader to guess which.
   */
  static open(stateDir: string): Journal {
    const path = journalPath(stateDir);
    try {
      const db = openDatabase(path);
      return new Journal(db, stateDir, fileIdentity(path)!);
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err);
      throw new Error(
        `cannot open the journal ${path}: ${message}` + damageNote(message) + fullNote(stateDir),
      );
    }
  }

  /** Inserts the row of a run that is starting; returns its id. */
  start(row: JournalStart): number {
    this.#follow();
    const id = this.#insert(row);
    this.#unfinished.set(id, id);
    return id;
  }

  /** Inserts an unfinished row; returns its id. */
  #insert(row: JournalStart): number {
    const kinds = new Set(row.effects.map((effect) => effect.kind));
    return this.#transaction(() => {
      const inserted = this.#prepare(
        `INSERT INTO entries (session, principal, ts_ns, cwd, src, head, effects, opaque,
           approved_by)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      ).run(
        row.session,
        row.principal,
        row.ts_ns,
        row.cwd,
        row.src,
        headOf(row.src),
        JSON.stringify(row.effects),
        kinds.has("opaque") ? 1 : 0,
        row.approved_by ?? null,
      );
      const id = Number(inserted.lastInsertRowid);
      const kindInsert = this.#prepare(
        "INSERT INTO entry_effects (entry_id, kind) VALUES (?, ?)",
      );
      for (const kind of kinds) kindInsert.run(id, kind);
      return id;
    });
  }

  /**
   * Completes row `id` and, in the same transaction, appends its `journal` channel event
   * `{entry_id, session, principal, head, ok}` (§9.2, J-6). Returns the stored event for the bus
   * (`EventBus.publishStored`).
   */
  finish(started: number, result: JournalFinish): BusEvent {
    const id = this.#unfinished.get(started) ?? started;
    const event = this.#transaction(() => {
      const row = this.#prepare(
        `UPDATE entries SET dur_ns = ?, status = ?, ok = ?, outputs = ?
         WHERE id = ? AND dur_ns IS NULL
         RETURNING session, principal, CAST(head AS BLOB) AS head`,
      ).get(
        result.dur_ns,
        result.status,
        result.ok ? 1 : 0,
        JSON.stringify(result.outputs),
        id,
      ) as { session: string; principal: string; head: Uint8Array | null } | undefined;
      if (row === undefined) throw new UnknownEntry(id);
      return this.appendEvent("journal", {
        entry_id: id,
        session: row.session,
        principal: row.principal,
        head: storedText(row.head),
        ok: result.ok,
      });
    });
    this.#unfinished.delete(started);
    return event;
  }

  /**
   * Keeps row `id`, whose run ended but whose closing write failed (a full disk), to be closed as
   * a failed run by {@link closeLeft}: left as it is, it would read as running for good.
   */
  leaveUnfinished(id: number): void {
    this.#left.add(id);
  }

  /**
   * Closes the rows {@link leaveUnfinished} kept as failed runs (`ok` false, `status` null), each
   * with its `journal` event, returned for the bus; those that still cannot be written stay kept.
   */
  closeLeft(): BusEvent[] {
    const events: BusEvent[] = [];
    for (const id of this.#left) {
      try {
        events.push(this.finish(id, { dur_ns: 0n, status: null, ok: false, outputs: [] }));
      } catch (e) {
        if (!(e instanceof UnknownEntry)) break;
      }
      this.#left.delete(id);
    }
    return events;
  }

  /** Appends an event to a durable channel with the next seq (K-EVT-7). */
  appendEvent(channel: string, payload: unknown): BusEvent {
    const ts = nowNs();
    const row = this.#prepare(
      `INSERT INTO events (channel, seq, ts_ns, payload)
       SELECT ?, max(coalesce(max(seq), -1), ?) + 1, ?, ? FROM events WHERE channel = ?
       RETURNING seq`,
    ).get(channel, this.#seqFloor.get(channel) ?? -1, ts, JSON.stringify(payload), channel) as Row;
    return { channel, seq: Number(row.seq), ts, payload };
  }

  /**
   * The newest `limit` stored events of `channel` with `since < seq < before`, ascending; with
   * `only`, those of that owner ({@link DurableLog.readEvents}), through its index.
   */
  readEvents(
    channel: string,
    since: number,
    limit: number,
    before = Number.MAX_SAFE_INTEGER,
    only?: string,
  ): BusEvent[] {
    const member = NARROWING_MEMBER.get(channel);
    const narrowed = only !== undefined && member !== undefined;
    const statement = this.#prepare(
      narrowed
        ? `SELECT seq, ts_ns, payload FROM events INDEXED BY ${NARROWING_INDEX.get(channel)}
           WHERE channel = '${channel}' AND json_extract(payload, '$.${member}') = ?
             AND seq > ? AND seq < ? ORDER BY seq DESC LIMIT ?`
        : `SELECT seq, ts_ns, payload FROM events
           WHERE channel = ? AND seq > ? AND seq < ? ORDER BY seq DESC LIMIT ?`,
    );
    statement.setReadBigInts(true);
    const rows = statement.all(narrowed ? only : channel, since, before, limit) as Row[];
    return rows.reverse().map((row) => ({
      channel,
      seq: Number(row.seq),
      ts: row.ts_ns as bigint,
      payload: JSON.parse(row.payload as string),
    }));
  }

  /**
   * The highest stored seq of `channel`, or -1 when it has none; at least the seq its events
   * reached in journal files since removed.
   */
  lastSeq(channel: string): number {
    const row = this.#prepare(
      "SELECT coalesce(max(seq), -1) AS seq FROM events WHERE channel = ?",
    ).get(channel) as Row;
    return Math.max(Number(row.seq), this.#seqFloor.get(channel) ?? -1);
  }

  /** `journal.query` (K-JQ-1..4): the rows of {@link journalQuerySql}, newest first. */
  query(query: JournalQuery, scope: JournalScope): JournalEntry[] {
    try {
      this.#follow();
    } catch {
      // a new file cannot be made now (a full disk): the next run's start says so; read this one
    }
    const { sql, args } = journalQuerySql(query, scope);
    const statement = this.db.prepare(sql);
    statement.setReadBigInts(true);
    return (statement.all(...args) as Row[]).map(toEntry);
  }

  /**
   * Copies the WAL's frames into journal.db (a passive checkpoint), as the kernel's idle work:
   * left to SQLite, the commit that passes its threshold (1000 pages, some 100 execs) checkpoints
   * inline, and its exec waits on the two fsyncs (10-30 ms on a loaded host, issue 33); after an
   * idle checkpoint the WAL starts over. A failure changes nothing: SQLite's own still bounds it.
   */
  checkpoint(): void {
    try {
      this.db.exec("PRAGMA wal_checkpoint(PASSIVE)");
    } catch {
      // busy, or a full disk: the next idle time, or the automatic checkpoint, does it
    }
  }

  /** Closes the database (the kernel's shutdown path, G-SOCK-8). */
  close(): void {
    this.db.close();
  }

  /**
   * Opens `journal.db` again when it is no longer the file this journal has open: removed (its
   * user clearing the state directory) or moved aside, the rows written to the open file were
   * gone at the next restart (J-5). Row ids and durable event seqs go on from the old file's
   * (K-EVT-7), and the rows of runs still going are carried over, to be finished in the new one.
   */
  #follow(): void {
    const path = journalPath(this.stateDir);
    if (this.db.isTransaction || fileIdentity(path) === this.identity) return;
    const old = this.db;
    const last = old.prepare("SELECT coalesce(max(id), 0) AS id FROM entries").get() as Row;
    const going = [...this.#unfinished].map(([started, id]) =>
      [started, startOf(old, id)] as const
    );
    for (const channel of DURABLE_CHANNELS) this.#seqFloor.set(channel, this.lastSeq(channel));
    mkdirSync(this.stateDir, { recursive: true, mode: 0o700 });
    const db = openDatabase(path);
    try {
      raiseNextId(db, Number(last.id));
    } catch (err) {
      db.close();
      throw err;
    }
    this.db = db;
    this.identity = fileIdentity(path)!;
    this.#statements.clear();
    old.close();
    for (const [started, row] of going) {
      if (row === undefined) this.#unfinished.delete(started);
      else this.#unfinished.set(started, this.#insert(row));
    }
  }

  /** The prepared statement of `sql`, prepared once. */
  #prepare(sql: string): StatementSync {
    let statement = this.#statements.get(sql);
    if (statement === undefined) {
      statement = this.db.prepare(sql);
      this.#statements.set(sql, statement);
    }
    return statement;
  }

  /**
   * Runs `work`, calls of this journal, as one transaction: one commit instead of one per write
   * (a run's finished row and its transcript event, K-EXEC-8).
   */
  batch<T>(work: () => T): T {
    return this.#transaction(work);
  }

  /** Runs `work` in a transaction of its own, or in the one of an enclosing {@link batch}. */
  #transaction<T>(work: () => T): T {
    if (this.db.isTransaction) return work();
    this.db.exec("BEGIN IMMEDIATE");
    try {
      const result = work();
      this.db.exec("COMMIT");
      return result;
    } catch (err) {
      if (this.db.isTransaction) this.db.exec("ROLLBACK");
      throw err;
    }
  }
}

/**
 * What to add to SQLite's word for a journal that is damaged (cut short, overwritten): what the
 * user can do, and that nothing else of the state directory is in it.
 */
function damageNote(message: string): string {
  if (!/database disk image is malformed|file is not a database/.test(message)) return "";
  return "; the file is damaged: move journal.db (with journal.db-wal and journal.db-shm) aside " +
    "and start again for an empty journal (sqlite3's .recover may save its rows); tokens.json " +
    "and the stored outputs in cas/ are not in it";
}

/**
 * What to add to a journal that cannot be opened when the state directory's file system is
 * (nearly) full, of bytes or of files: SQLite says only "disk I/O error" when it cannot make the
 * WAL's shared memory, "unable to open database file" when it cannot make the WAL.
 */
function fullNote(stateDir: string): string {
  try {
    const fs = statfsSync(stateDir);
    const free = fs.bavail * fs.bsize;
    if (fs.files > 0 && fs.ffree === 0) {
      return " (its file system is full: no free inodes; remove some files)";
    }
    if (free >= 1024 * 1024) return "";
    return ` (its file system is full: ${Math.floor(free / 1024)} KiB free; free some space)`;
  } catch {
    return "";
  }
}

/**
 * The journal's schema version, kept in SQLite's `user_version` (J-1). 0 is a journal written
 * before shoal numbered its schema (its missing column and indexes are added on open); a journal
 * of a higher version was written by a newer shoal, whose rows this kernel would misread or fail
 * to write, so it refuses it (and changes nothing in it).
 */
export const JOURNAL_SCHEMA_VERSION = 1;

/** The most memory SQLite's page cache of the journal holds, in KiB. */
const JOURNAL_CACHE_KIB = 256;

/** The journal database at `path`, its pragmas set and its schema made (J-1). */
function openDatabase(path: string): DatabaseSync {
  // Create the file ourselves so it never exists with wider permissions; SQLite gives the
  // -wal and -shm files the database file's mode.
  Deno.openSync(path, { create: true, write: true, mode: 0o600 }).close();
  Deno.chmodSync(path, 0o600);
  const db = new DatabaseSync(path);
  try {
    db.exec("PRAGMA busy_timeout = 5000");
    const version = schemaVersion(db);
    db.exec("PRAGMA journal_mode = WAL");
    db.exec("PRAGMA synchronous = NORMAL");
    // SQLite's page cache may grow to 2 MiB by default, held for the kernel's life; a journal's
    // reads are recent rows and index pages, and the OS caches the file anyway. 256 KiB kept the
    // kernel's anonymous memory 2 MiB lower after 4,000 execs (issue 33).
    db.exec(`PRAGMA cache_size = -${JOURNAL_CACHE_KIB}`);
    db.exec(SCHEMA);
    addApprovedBy(db);
    // Only once: setting it is a write, which would wait on another process's write lock.
    if (version < JOURNAL_SCHEMA_VERSION) {
      db.exec(`PRAGMA user_version = ${JOURNAL_SCHEMA_VERSION}`);
    }
  } catch (err) {
    db.close();
    throw err;
  }
  return db;
}

/**
 * The journal's schema version; throws, before anything is written, when it is above
 * {@link JOURNAL_SCHEMA_VERSION}: left to run, a kernel served such a journal and failed every exec
 * with 'cannot write the journal row … NOT NULL constraint failed', blaming the state directory.
 */
function schemaVersion(db: DatabaseSync): number {
  const { user_version } = db.prepare("PRAGMA user_version").get() as { user_version: number };
  if (user_version > JOURNAL_SCHEMA_VERSION) {
    throw new Error(
      `it was written by a newer shoal (journal schema version ${user_version}; this kernel ` +
        `reads version ${JOURNAL_SCHEMA_VERSION} and older) and is left as it is: run that ` +
        `newer shoal-kernel, or move journal.db aside to start an empty journal`,
    );
  }
  return user_version;
}

/** Adds the `approved_by` column to a journal written before it existed (M-ELICIT-1). */
function addApprovedBy(db: DatabaseSync): void {
  const columns = db.prepare("PRAGMA table_info(entries)").all() as Row[];
  if (!columns.some((c) => c.name === "approved_by")) {
    db.exec("ALTER TABLE entries ADD COLUMN approved_by TEXT");
  }
}

/** Where a state directory's journal lives (J-1). */
function journalPath(stateDir: string): string {
  return `${stateDir}/journal.db`;
}

/** Makes the next row id of `db` greater than `lastId`, unless it is already. */
function raiseNextId(db: DatabaseSync, lastId: number): void {
  const row = db.prepare(
    "SELECT coalesce(max(seq), 0) AS seq FROM sqlite_sequence WHERE name = 'entries'",
  ).get() as Row;
  if (Number(row.seq) >= lastId) return;
  db.exec("DELETE FROM sqlite_sequence WHERE name = 'entries'");
  db.prepare("INSERT INTO sqlite_sequence (name, seq) VALUES ('entries', ?)").run(lastId);
}

/** The start of unfinished row `id` of `db`, as {@link Journal.start} was given it. */
function startOf(db: DatabaseSync, id: number): JournalStart | undefined {
  const statement = db.prepare(
    `SELECT session, principal, ts_ns, cwd, CAST(src AS BLOB) AS src, effects, approved_by
     FROM entries WHERE id = ? AND dur_ns IS NULL`,
  );
  statement.setReadBigInts(true);
  const row = statement.get(id) as Row | undefined;
  if (row === undefined) return undefined;
  return {
    session: row.session as string,
    principal: row.principal as string,
    ts_ns: row.ts_ns as bigint,
    cwd: row.cwd as Uint8Array,
    src: storedText(row.src),
    effects: JSON.parse(row.effects as string),
    approved_by: row.approved_by as string | null,
  };
}

/** A stored source cut to its K-JQ-4 wire form: 16384 bytes at a scalar boundary, then `…`. */
function shownSrc(src: string): string {
  return utf8Length(src) <= JOURNAL_SRC_BYTES ? src : utf8Prefix(src, JOURNAL_SRC_BYTES) + "…";
}

function toEntry(row: Row): JournalEntry {
  const effects: JournalEffect[] = JSON.parse(row.effects as string);
  const entry: JournalEntry = {
    id: Number(row.id),
    session: row.session as string,
    principal: row.principal as string,
    ts: row.ts_ns as bigint,
    dur_ns: row.dur_ns as bigint | null,
    cwd: pathObject(row.cwd as Uint8Array),
    src: shownSrc(storedText(row.src)),
    ...reportEffects(effects),
    status: row.status === null ? null : Number(row.status),
    ok: row.ok === null ? null : row.ok === 1n,
    opaque: row.opaque === 1n,
    outputs: row.outputs === null ? [] : JSON.parse(row.outputs as string),
  };
  if (typeof row.approved_by === "string") entry.approved_by = row.approved_by;
  return entry;
}
