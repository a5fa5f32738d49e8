// A state directory whose journal.db another shoal version wrote (J-1, J-5, G-STATE-2/5): the
// journal of an older version is opened and kept, one of a newer version is refused at startup,
// and neither loses a row.
import assert from "node:assert/strict";
import { DatabaseSync } from "node:sqlite";
import { kernelUntilExit, launchKernel } from "../../_support/kernel.ts";
import type { Rec } from "../../_support/rec.ts";
import { sandbox } from "../../_support/sandbox.ts";
import { createToken } from "../../_support/principals.ts";

/** The `entries` table as the first shoal versions made it (no `approved_by`, no user_version). */
const FIRST_SCHEMA = `
CREATE TABLE entries (
  id INTEGER PRIMARY KEY AUTOINCREMENT, session TEXT NOT NULL, principal TEXT NOT NULL,
  ts_ns INTEGER NOT NULL, dur_ns INTEGER, cwd BLOB NOT NULL, src TEXT NOT NULL, head TEXT NOT NULL,
  effects TEXT NOT NULL, status INTEGER, ok INTEGER, opaque INTEGER NOT NULL, outputs TEXT
);
CREATE TABLE entry_effects (entry_id INTEGER NOT NULL, kind TEXT NOT NULL,
  PRIMARY KEY (entry_id, kind)) WITHOUT ROWID;
CREATE TABLE events (channel TEXT NOT NULL, seq INTEGER NOT NULL, ts_ns INTEGER NOT NULL,
  payload TEXT NOT NULL, PRIMARY KEY (channel, seq)) WITHOUT ROWID;
INSERT INTO entries (session, principal, ts_ns, dur_ns, cwd, src, head, effects, status, ok,
  opaque, outputs)
  VALUES ('work', 'uid:${Deno.uid()}', 1767225600123456789, 5, CAST('/tmp' AS BLOB), 'echo old',
  'echo', '[]', 0, 1, 0, '[]');
INSERT INTO events VALUES ('journal', 0, 1767225600123456789,
  '{"entry_id":1,"session":"work","principal":"uid:${Deno.uid()}","head":"echo","ok":true}');
`;

/** How many files lie below `dir`. */
function casFiles(dir: string): number {
  let n = 0;
  for (const entry of Deno.readDirSync(dir)) {
    n += entry.isDirectory ? casFiles(`${dir}/${entry.name}`) : 1;
  }
  return n;
}

/** A sandbox whose default state directory holds a journal.db made by `sql`. */
async function boxWithJournal(sql: string) {
  const box = await sandbox();
  const state = `${box.dir}/state/shoal`;
  await Deno.mkdir(state, { recursive: true, mode: 0o700 });
  const db = new DatabaseSync(`${state}/journal.db`);
  db.exec(sql);
  db.close();
  await Deno.chmod(`${state}/journal.db`, 0o600);
  return { box, journal: `${state}/journal.db` };
}

Deno.test("J-1/G-STATE-2 a journal.db of a newer shoal (user_version 9, a NOT NULL column this kernel does not fill) stops the kernel with exit 1 and no socket left bound, saying so, and leaves the journal as it was", async () => {
  const { box, journal } = await boxWithJournal(
    FIRST_SCHEMA +
      "ALTER TABLE entries ADD COLUMN approved_by TEXT;" +
      "ALTER TABLE entries ADD COLUMN host TEXT NOT NULL DEFAULT 'h';" +
      "PRAGMA user_version = 9;",
  );
  try {
    const before = await Deno.readFile(journal);
    const r = await kernelUntilExit(box, ["--socket", box.socket()]);
    assert.equal(r.code, 1, r.stderr);
    assert.ok(r.stderr.includes(journal), r.stderr);
    assert.match(r.stderr, /newer shoal \(journal schema version 9; this kernel reads version 1/);
    assert.equal(await Deno.lstat(box.socket()).catch(() => null), null, "no socket left bound");
    const after = await Deno.readFile(journal);
    assert.ok(after.length === before.length && after.every((b, i) => b === before[i]));
  } finally {
    await box.cleanup();
  }
});

Deno.test("J-5 a journal.db of the first shoal versions (no schema version, no approved_by) is served with its rows and events, and marked with this kernel's schema version", async () => {
  const { box, journal } = await boxWithJournal(FIRST_SCHEMA);
  try {
    const kernel = await launchKernel(box, ["--socket", box.socket()], box.socket());
    try {
      const human = await kernel.attach("work");
      const rows = (await human.request("journal.query", {})) as Rec[];
      assert.deepEqual(rows.map((row) => row.src), ["echo old"]);
      await human.request("exec", { src: "echo new" });
      const now = (await human.request("journal.query", {})) as Rec[];
      assert.deepEqual(now.map((row) => [row.id, row.src]), [[2, "echo new"], [1, "echo old"]]);
      const events = (await human.request("events.read", { channel: "journal", since: -1 })) as Rec;
      assert.deepEqual((events.events as Rec[]).map((e) => e.seq), [0, 1]);
    } finally {
      await kernel.stop();
    }
    const db = new DatabaseSync(journal, { readOnly: true });
    try {
      assert.equal((db.prepare("PRAGMA user_version").get() as Rec).user_version, 1);
    } finally {
      db.close();
    }
  } finally {
    await box.cleanup();
  }
});

Deno.test("J-1/G-STATE-2 a journal.db cut short stops the kernel with exit 1, saying it is damaged and what to do, and leaves it, the tokens and the stored outputs as they were", async () => {
  const box = await sandbox();
  try {
    await createToken(box, "agent:a", "agent:a");
    const kernel = await launchKernel(box, ["--socket", box.socket()], box.socket());
    try {
      const human = await kernel.attach("work");
      for (let i = 0; i < 20; i++) await human.request("exec", { src: `seq ${i} 2000` });
    } finally {
      await kernel.stop();
    }
    const state = `${box.dir}/state/shoal`;
    const journal = `${state}/journal.db`;
    const whole = await Deno.readFile(journal);
    await Deno.writeFile(journal, whole.subarray(0, Math.floor(whole.length / 2) + 100));
    const before = await Deno.readFile(journal);
    const tokens = await Deno.readTextFile(`${state}/tokens.json`);
    const cas = casFiles(`${state}/cas`);
    assert.ok(cas > 0);
    const r = await kernelUntilExit(box, ["--socket", box.socket()]);
    assert.equal(r.code, 1, r.stderr);
    assert.ok(r.stderr.includes(journal), r.stderr);
    assert.match(r.stderr, /the file is damaged: move journal\.db .* aside/);
    const after = await Deno.readFile(journal);
    assert.ok(after.length === before.length && after.every((b, i) => b === before[i]));
    assert.equal(await Deno.readTextFile(`${state}/tokens.json`), tokens);
    assert.equal(casFiles(`${state}/cas`), cas);
  } finally {
    await box.cleanup();
  }
});

// Holds a write transaction on the database named by argv[1] until killed (a sqlite3 shell, a
// backup tool).
const HOLDER = `
import sqlite3, sys, time
db = sqlite3.connect(sys.argv[1], isolation_level=None)
db.execute("BEGIN IMMEDIATE")
print("locked", flush=True)
time.sleep(120)
`;

Deno.test("J-1 a kernel starts on a journal of its own schema version that another process holds in a write transaction: opening it writes nothing", async () => {
  const box = await sandbox();
  try {
    const first = await launchKernel(box, ["--socket", box.socket()], box.socket());
    await first.stop();
    const holder = new Deno.Command("python3", {
      args: ["-c", HOLDER, `${box.dir}/state/shoal/journal.db`],
      stdout: "piped",
    }).spawn();
    try {
      await holder.stdout.getReader().read();
      const next = await launchKernel(box, ["--socket", box.socket()], box.socket());
      await next.stop();
    } finally {
      holder.kill("SIGKILL");
      await holder.status;
    }
  } finally {
    await box.cleanup();
  }
});
