import assert from "node:assert/strict";
import { DatabaseSync } from "node:sqlite";
import { ErrorCode, RpcError } from "../../../src/protocol/errors.ts";
import type { JournalStart } from "../../../src/kernel/journal/entry.ts";
import { Journal } from "../../../src/kernel/journal/journal.ts";
import { journalQueryParams } from "../../../src/kernel/journal/query_params.ts";

const BASE_TS = 1767225600123456789n;
const encoder = new TextEncoder();
const ALL = { principal: "uid:1000", journalRead: true };

function run(overrides: Partial<JournalStart> = {}): JournalStart {
  return {
    session: "work",
    principal: "uid:1000",
    ts_ns: BASE_TS,
    cwd: encoder.encode("/home/me/proj"),
    src: "ls -l",
    effects: [
      { kind: "fs_read", paths: ["/home/me/proj"] },
      { kind: "proc_spawn", argv0: "ls", bin_hash: null },
    ],
    ...overrides,
  };
}

function finished(journal: Journal, row: JournalStart, ok = true): number {
  const id = journal.start(row);
  journal.finish(id, { dur_ns: 5n, status: ok ? 0 : 1, ok, outputs: [] });
  return id;
}

async function withJournal(
  fn: (journal: Journal, dir: string) => void | Promise<void>,
): Promise<void> {
  const dir = await Deno.makeTempDir();
  const journal = Journal.open(dir);
  try {
    await fn(journal, dir);
  } finally {
    journal.close();
    await Deno.remove(dir, { recursive: true });
  }
}

const q = (params: Record<string, unknown> = {}) => journalQueryParams.parse(params);
const ids = (entries: { id: number }[]) => entries.map((e) => e.id);

Deno.test("J-1 journal.db, -wal and -shm are mode 0600 and in WAL mode", async () => {
  await withJournal((journal, dir) => {
    finished(journal, run());
    for (const name of ["journal.db", "journal.db-wal", "journal.db-shm"]) {
      assert.equal(Deno.statSync(`${dir}/${name}`).mode! & 0o777, 0o600, name);
    }
    const db = new DatabaseSync(`${dir}/journal.db`);
    assert.equal(db.prepare("PRAGMA journal_mode").get()?.journal_mode, "wal");
    db.close();
  });
});

Deno.test("J-1 an existing journal.db with looser permissions is tightened", async () => {
  const dir = await Deno.makeTempDir();
  try {
    Deno.writeFileSync(`${dir}/journal.db`, new Uint8Array(), { mode: 0o644 });
    Deno.chmodSync(`${dir}/journal.db`, 0o644);
    Journal.open(dir).close();
    assert.equal(Deno.statSync(`${dir}/journal.db`).mode! & 0o777, 0o600);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("K-JQ-4 entries have the wire shape; unfinished rows have null dur_ns/status/ok", async () => {
  await withJournal((journal) => {
    const id = journal.start(run());
    const [open] = journal.query(q(), ALL);
    assert.deepEqual(open, {
      id,
      session: "work",
      principal: "uid:1000",
      ts: BASE_TS,
      dur_ns: null,
      cwd: { display: "/home/me/proj" },
      src: "ls -l",
      effects: run().effects,
      status: null,
      ok: null,
      opaque: false,
      outputs: [],
    });
    const outputs = [
      { kind: "stdout" as const, hash: "sha256:ab", len: 512 },
      { kind: "render" as const, hash: "sha256:cd", len: 498 },
    ];
    journal.finish(id, { dur_ns: 12000000n, status: 0, ok: true, outputs });
    const [done] = journal.query(q(), ALL);
    assert.equal(done.dur_ns, 12000000n);
    assert.equal(done.status, 0);
    assert.equal(done.ok, true);
    assert.deepEqual(done.outputs, outputs);
  });
});

Deno.test("J-2 ns timestamps above 2^53 round-trip exactly as bigints", async () => {
  await withJournal((journal) => {
    const ts = 9007199254740993n * 200n + 7n;
    const id = journal.start(run({ ts_ns: ts }));
    journal.finish(id, { dur_ns: 9007199254740993n, status: 0, ok: true, outputs: [] });
    const [entry] = journal.query(q(), ALL);
    assert.equal(entry.ts, ts);
    assert.equal(entry.dur_ns, 9007199254740993n);
  });
});

Deno.test("J-2 signal-killed runs have status null and ok false; opaque and head are derived", async () => {
  await withJournal((journal) => {
    const id = journal.start(
      run({ src: "  eval  $x", effects: [{ kind: "opaque", reason: "eval" }] }),
    );
    journal.finish(id, { dur_ns: 1n, status: null, ok: false, outputs: [] });
    const [entry] = journal.query(q({ head: "eval" }), ALL);
    assert.equal(entry.id, id);
    assert.equal(entry.status, null);
    assert.equal(entry.ok, false);
    assert.equal(entry.opaque, true);
  });
});

Deno.test("V-TAG-3 a non-UTF-8 cwd is returned with base64 raw bytes", async () => {
  await withJournal((journal) => {
    journal.start(run({ cwd: new Uint8Array([0x2f, 0x74, 0xff]) }));
    const [entry] = journal.query(q(), ALL);
    assert.equal(entry.cwd.raw, "L3T/");
    assert.equal(entry.cwd.display, "/t\ufffd");
  });
});

Deno.test("K-JQ-1 since/until are inclusive, principal and head exact, results newest first", async () => {
  await withJournal((journal) => {
    const a = finished(journal, run({ ts_ns: BASE_TS }));
    const b = finished(journal, run({ ts_ns: BASE_TS + 1000_000n, src: "cat x" }));
    const c = finished(journal, run({ ts_ns: BASE_TS + 2000_000n, principal: "agent:b" }));
    assert.deepEqual(ids(journal.query(q(), ALL)), [c, b, a]);
    assert.deepEqual(
      ids(journal.query(q({ since: BASE_TS + 1000_000n, until: BASE_TS + 2000_000n }), ALL)),
      [c, b],
    );
    assert.deepEqual(ids(journal.query(q({ until: BASE_TS + 1000_000n }), ALL)), [b, a]);
    assert.deepEqual(ids(journal.query(q({ principal: "agent:b" }), ALL)), [c]);
    assert.deepEqual(ids(journal.query(q({ principal: "agent" }), ALL)), []);
    assert.deepEqual(ids(journal.query(q({ head: "cat" }), ALL)), [b]);
    assert.deepEqual(ids(journal.query(q({ head: "ca" }), ALL)), []);
  });
});

Deno.test("W-NUM-1 time filters tolerate ts that a client rounded through a double", async () => {
  await withJournal((journal) => {
    // Find one ts that a double rounds up and one it rounds down.
    let up = BASE_TS;
    while (BigInt(Number(up)) <= up) up++;
    let down = BASE_TS + 10_000_000n;
    while (BigInt(Number(down)) >= down) down++;
    for (const ts of [up, down]) {
      const id = finished(journal, run({ ts_ns: ts }));
      const rounded = Number(ts);
      assert.deepEqual(ids(journal.query(q({ since: rounded, until: rounded }), ALL)), [id]);
    }
  });
});

Deno.test("K-JQ-1 ok filter: unfinished rows never match ok true or ok false", async () => {
  await withJournal((journal) => {
    const good = finished(journal, run(), true);
    const bad = finished(journal, run(), false);
    journal.start(run());
    assert.deepEqual(ids(journal.query(q({ ok: true }), ALL)), [good]);
    assert.deepEqual(ids(journal.query(q({ ok: false }), ALL)), [bad]);
  });
});

Deno.test("K-JQ-1 effects filter is all-of, accepts dotted names, rejects unknown kinds", async () => {
  await withJournal((journal) => {
    const readOnly = finished(journal, run());
    const copy = finished(
      journal,
      run({
        src: "cp a b",
        effects: [
          { kind: "fs_read", paths: ["/a"] },
          { kind: "fs_write", paths: ["/b"] },
          { kind: "proc_spawn", argv0: "cp", bin_hash: null },
        ],
      }),
    );
    assert.deepEqual(ids(journal.query(q({ effects: ["fs.read"] }), ALL)), [copy, readOnly]);
    assert.deepEqual(
      ids(journal.query(q({ effects: ["fs_read", "fs.write"] }), ALL)),
      [copy],
    );
    assert.deepEqual(ids(journal.query(q({ effects: ["fs_write", "net_connect"] }), ALL)), []);
    assert.equal(journalQueryParams.safeParse({ effects: ["fs.reads"] }).success, false);
    // A substring of a stored kind is not a match (D-FIX-12).
    assert.equal(journalQueryParams.safeParse({ effects: ["fs"] }).success, false);
  });
});

Deno.test("K-JQ-2 the limit never hides older matches behind newer non-matching rows", async () => {
  await withJournal((journal) => {
    const target = finished(journal, run({ src: "make test", ts_ns: BASE_TS }));
    for (let i = 0; i < 1500; i++) {
      journal.start(run({ ts_ns: BASE_TS + BigInt(i + 1) * 1000_000n }));
    }
    assert.deepEqual(ids(journal.query(q({ head: "make", limit: 1 }), ALL)), [target]);
    assert.deepEqual(
      ids(journal.query(q({ effects: ["proc.spawn"], ok: true, limit: 5 }), ALL)),
      [target],
    );
    assert.deepEqual(
      ids(journal.query(q({ until: BASE_TS, limit: 1 }), ALL)),
      [target],
    );
  });
});

Deno.test("K-JQ-1 limit: absent or 0 means 100, at most 1000, newest rows first", async () => {
  await withJournal((journal) => {
    for (let i = 0; i < 1100; i++) journal.start(run());
    const def = journal.query(q(), ALL);
    assert.equal(def.length, 100);
    assert.equal(def[0].id, 1100);
    assert.equal(def[99].id, 1001);
    assert.equal(journal.query(q({ limit: 0 }), ALL).length, 100);
    assert.equal(journal.query(q({ limit: 1000 }), ALL).length, 1000);
    assert.equal(journal.query(q({ limit: 7 }), ALL).length, 7);
    assert.equal(journalQueryParams.safeParse({ limit: 1001 }).success, false);
    assert.equal(journalQueryParams.safeParse({ limit: -1 }).success, false);
    assert.equal(journalQueryParams.safeParse({ limit: 1.5 }).success, false);
  });
});

Deno.test("K-JQ-3 callers without journal_read see only their own rows", async () => {
  await withJournal((journal) => {
    const mine = finished(journal, run({ principal: "agent:a" }));
    const theirs = finished(journal, run({ principal: "agent:b" }));
    const a = { principal: "agent:a", journalRead: false };
    assert.deepEqual(ids(journal.query(q(), a)), [mine]);
    assert.deepEqual(ids(journal.query(q({ principal: "agent:a" }), a)), [mine]);
    assert.deepEqual(ids(journal.query(q({ head: "ls" }), a)), [mine]);
    assert.deepEqual(
      ids(journal.query(q(), { principal: "agent:a", journalRead: true })),
      [theirs, mine],
    );
    assert.deepEqual(
      ids(journal.query(q({ principal: "agent:b" }), { principal: "x", journalRead: true })),
      [theirs],
    );
    assert.throws(
      () => journal.query(q({ principal: "agent:b" }), a),
      (err) => err instanceof RpcError && err.code === ErrorCode.LEASH_DENIED,
    );
  });
});

Deno.test("J-6 finish appends the journal event in the row's transaction", async () => {
  await withJournal((journal) => {
    const id = journal.start(run());
    const event = journal.finish(id, { dur_ns: 1n, status: 0, ok: true, outputs: [] });
    assert.equal(event.channel, "journal");
    assert.deepEqual(event.payload, {
      entry_id: id,
      session: "work",
      principal: "uid:1000",
      head: "ls",
      ok: true,
    });
    assert.equal(event.seq, 0);
    assert.equal(typeof event.ts, "bigint");
    assert.deepEqual(journal.readEvents("journal", -1, 10), [event]);
    // A second finish fails and appends nothing.
    assert.throws(() => journal.finish(id, { dur_ns: 1n, status: 0, ok: true, outputs: [] }));
    assert.throws(() => journal.finish(999, { dur_ns: 1n, status: 0, ok: true, outputs: [] }));
    assert.equal(journal.lastSeq("journal"), 0);
  });
});

Deno.test("K-EVT-7 readEvents returns the newest limit ascending; durable seq continues after reopen", async () => {
  const dir = await Deno.makeTempDir();
  try {
    let journal = Journal.open(dir);
    for (let i = 0; i < 5; i++) {
      assert.equal(journal.appendEvent("session.transcript", { n: i }).seq, i);
    }
    assert.equal(journal.lastSeq("journal"), -1);
    assert.deepEqual(
      journal.readEvents("session.transcript", 0, 2).map((e) => e.payload),
      [{ n: 3 }, { n: 4 }],
    );
    assert.deepEqual(
      journal.readEvents("session.transcript", 0, 10, 3).map((e) => e.seq),
      [1, 2],
    );
    journal.close();
    journal = Journal.open(dir);
    assert.equal(journal.lastSeq("session.transcript"), 4);
    assert.equal(journal.appendEvent("session.transcript", { n: 5 }).seq, 5);
    journal.close();
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("J-5 kill -9 mid-loop keeps every finished row and an intact database", async () => {
  const dir = await Deno.makeTempDir();
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", new URL("./_journal_writer.ts", import.meta.url).pathname, dir],
    stdout: "piped",
    stderr: "null",
  }).spawn();
  const guard = setTimeout(() => child.kill("SIGKILL"), 30_000);
  const reported: [number, number][] = [];
  try {
    let buffered = "";
    const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
    while (reported.length < 100) {
      const { value, done } = await reader.read();
      if (done) break;
      buffered += value;
      const lines = buffered.split("\n");
      buffered = lines.pop()!;
      for (const line of lines) {
        const [id, seq] = line.split(" ").map(Number);
        reported.push([id, seq]);
      }
    }
    child.kill("SIGKILL");
    await reader.cancel();
    const status = await child.status;
    assert.equal(status.signal, "SIGKILL");
    assert.ok(reported.length >= 100, `child reported ${reported.length} rows`);

    const db = new DatabaseSync(`${dir}/journal.db`);
    try {
      assert.equal(db.prepare("PRAGMA integrity_check").get()?.integrity_check, "ok");
      const row = db.prepare("SELECT ok, dur_ns FROM entries WHERE id = ?");
      const event = db.prepare(
        "SELECT payload FROM events WHERE channel = 'journal' AND seq = ?",
      );
      for (const [id, seq] of reported) {
        assert.deepEqual({ ...row.get(id) }, { ok: 1, dur_ns: 1000 }, `row ${id}`);
        assert.equal(JSON.parse(event.get(seq)?.payload as string).entry_id, id);
      }
    } finally {
      db.close();
    }

    const journal = Journal.open(dir);
    try {
      const last = journal.lastSeq("journal");
      assert.ok(last >= reported.at(-1)![1]);
      const id = journal.start(run());
      const next = journal.finish(id, { dur_ns: 1n, status: 0, ok: true, outputs: [] });
      assert.equal(next.seq, last + 1);
    } finally {
      journal.close();
    }
  } finally {
    clearTimeout(guard);
    try {
      child.kill("SIGKILL");
    } catch {
      // already exited
    }
    await child.status;
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("J-2 head is cut to 256 scalars in the row, the journal event and the head filter", async () => {
  await withJournal((journal) => {
    const word = "#" + "é".repeat(300) + "😀".repeat(100);
    const id = journal.start(run({ src: `${word} tail` }));
    const event = journal.finish(id, { dur_ns: 1n, status: 0, ok: true, outputs: [] });
    const head = (event.payload as { head: string }).head;
    assert.equal([...head].length, 256);
    assert.equal(head, [...word].slice(0, 256).join(""));
    assert.deepEqual(ids(journal.query(q({ head: word }), ALL)), [id]);
    assert.deepEqual(ids(journal.query(q({ head }), ALL)), [id]);
  });
});

Deno.test("K-JQ-4 src is cut to 16384 bytes at a scalar boundary and effects to 100 entries", async () => {
  await withJournal((journal) => {
    const small = finished(journal, run({ src: "x".repeat(16384) }));
    const big = "é".repeat(8191) + "😀".repeat(10);
    const effects = Array.from({ length: 130 }, (_, i) => ({ kind: "fs_read", paths: [`/f${i}`] }));
    const cut = finished(journal, run({ src: big, effects }));
    const [cutRow, smallRow] = journal.query(q(), ALL);
    assert.equal(smallRow.id, small);
    assert.equal(smallRow.src, "x".repeat(16384));
    assert.equal(smallRow.effects_more, undefined);
    assert.equal(cutRow.id, cut);
    assert.equal(cutRow.src, "é".repeat(8191) + "…");
    assert.deepEqual(cutRow.effects, effects.slice(0, 100));
    assert.equal(cutRow.effects_more, 30);
  });
});

Deno.test("K-JQ-1 since/until outside the signed 64-bit range are invalid params", () => {
  for (const bad of [2n ** 63n, -(2n ** 63n) - 1n, 2n ** 64n + 5n]) {
    assert.equal(journalQueryParams.safeParse({ since: bad }).success, false, `since ${bad}`);
    assert.equal(journalQueryParams.safeParse({ until: bad }).success, false, `until ${bad}`);
  }
  assert.equal(q({ since: -(2n ** 63n), until: 2n ** 63n - 1n }).until, 2n ** 63n - 1n);
});

Deno.test("M-ELICIT-1: a row records who approved its plan; a journal written before approved_by existed gets the column and keeps its rows", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const old = new DatabaseSync(`${dir}/journal.db`);
    old.exec(`CREATE TABLE entries (
      id INTEGER PRIMARY KEY AUTOINCREMENT, session TEXT NOT NULL, principal TEXT NOT NULL,
      ts_ns INTEGER NOT NULL, dur_ns INTEGER, cwd BLOB NOT NULL, src TEXT NOT NULL,
      head TEXT NOT NULL, effects TEXT NOT NULL, status INTEGER, ok INTEGER,
      opaque INTEGER NOT NULL, outputs TEXT)`);
    old.exec(`INSERT INTO entries (session, principal, ts_ns, cwd, src, head, effects, opaque)
      VALUES ('work', 'uid:1000', 1, x'2f', 'echo old', 'echo', '[]', 0)`);
    old.close();
    const journal = Journal.open(dir);
    try {
      finished(journal, run({ src: "rm x", approved_by: "agent:a via client" }));
      finished(journal, run({ src: "ls" }));
      const rows = journal.query(journalQueryParams.parse({}), ALL);
      assert.deepEqual(
        rows.map((r) => [r.src, r.approved_by]),
        [["ls", undefined], ["rm x", "agent:a via client"], ["echo old", undefined]],
      );
      assert.equal("approved_by" in rows[0], false, "rows of no approved plan keep their shape");
    } finally {
      journal.close();
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
