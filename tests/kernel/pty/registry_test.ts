import assert from "node:assert/strict";
import { ErrorCode, RpcError } from "../../../src/protocol/errors.ts";
import { type PtyEventPayload, PtyRegistry } from "../../../src/kernel/pty/registry.ts";
import type { PtyOpenOptions } from "../../../src/kernel/pty/pty.ts";
import { withTempDir } from "../../_support/temp_dir.ts";
import { processExists, testEnv, waitForScreen } from "./_helpers.ts";

const HUMAN = "uid:0";
/** The local human's scope in sessions A and B: every PTY of the session. */
const A = { session: "A", principal: null };
const B = { session: "B", principal: null };

const hasCode = (code: number) => (e: unknown) => e instanceof RpcError && e.code === code;

function opts(dir: string, cmd: string, args: string[]): PtyOpenOptions {
  return { cmd, args, cwd: dir, env: testEnv(dir), cols: 80, rows: 24, sandbox: null };
}

Deno.test("K-PTY-7 ids come from one kernel-wide counter starting at 1", async () => {
  await withTempDir(async (dir) => {
    const reg = new PtyRegistry(() => {});
    try {
      const a = await reg.open("A", HUMAN, opts(dir, "sleep", ["1000"]));
      const b = await reg.open("B", HUMAN, opts(dir, "sleep", ["1000"]));
      await reg.close(A, a.id);
      const c = await reg.open("A", HUMAN, opts(dir, "sleep", ["1000"]));
      assert.deepEqual([a.id, b.id, c.id], ["pty:1", "pty:2", "pty:3"]);
      assert.deepEqual([a.channel, c.channel], ["pty.1", "pty.3"]);
    } finally {
      await reg.closeAll();
    }
  });
});

Deno.test("K-PTY-7 a session's PTY is invisible to other sessions", async () => {
  await withTempDir(async (dir) => {
    const reg = new PtyRegistry(() => {});
    try {
      const a = await reg.open("A", HUMAN, opts(dir, "sleep", ["1000"]));
      assert.throws(() => reg.get(B, a.id), hasCode(ErrorCode.UNKNOWN_PTY));
      await assert.rejects(reg.read(B, a.id), hasCode(ErrorCode.UNKNOWN_PTY));
      await assert.rejects(reg.send(B, a.id, "x"), hasCode(ErrorCode.UNKNOWN_PTY));
      assert.throws(() => reg.resize(B, a.id, 10, 10), hasCode(ErrorCode.UNKNOWN_PTY));
      await assert.rejects(reg.close(B, a.id), hasCode(ErrorCode.UNKNOWN_PTY));
      assert.deepEqual(reg.list(B), []);
      assert.equal(reg.get(A, a.id).pty.alive, true);
      assert.equal(processExists(a.pty.pid), true);
    } finally {
      await reg.closeAll();
    }
  });
});

Deno.test("K-PTY-7 malformed and unknown ids are -32022", async () => {
  const reg = new PtyRegistry(() => {});
  for (const id of ["pty:1", "pty:0", "pty:01", "1", "pty:abc", "", "pty.1"]) {
    assert.throws(() => reg.get(A, id), hasCode(ErrorCode.UNKNOWN_PTY), id);
  }
  await reg.closeAll();
});

Deno.test("K-PTY-5 close ends the program, frees the id; later use is -32022", async () => {
  await withTempDir(async (dir) => {
    const reg = new PtyRegistry(() => {});
    try {
      const { id, pty } = await reg.open("A", HUMAN, opts(dir, "sleep", ["1000"]));
      const result = await reg.close(A, id);
      assert.deepEqual(result, {
        pty_id: id,
        closed: true,
        exit: { status: null, signal: "SIGHUP" },
      });
      assert.equal(processExists(pty.pid), false);
      assert.throws(() => reg.get(A, id), hasCode(ErrorCode.UNKNOWN_PTY));
      await assert.rejects(reg.read(A, id), hasCode(ErrorCode.UNKNOWN_PTY));
      await assert.rejects(reg.close(A, id), hasCode(ErrorCode.UNKNOWN_PTY));
      assert.deepEqual(reg.list(A), []);
    } finally {
      await reg.closeAll();
    }
  });
});

Deno.test("K-PTY-1/E-2 a 17th open PTY in a session is -32040; other sessions unaffected", async () => {
  await withTempDir(async (dir) => {
    const reg = new PtyRegistry(() => {});
    try {
      const opened = await Promise.all(
        Array.from({ length: 16 }, () => reg.open("A", HUMAN, opts(dir, "sleep", ["1000"]))),
      );
      await assert.rejects(
        reg.open("A", HUMAN, opts(dir, "sleep", ["1000"])),
        (e: unknown) =>
          hasCode(ErrorCode.QUOTA_EXCEEDED)(e) &&
          JSON.stringify((e as RpcError).data) === JSON.stringify({ quota: "ptys", limit: 16 }),
      );
      const b = await reg.open("B", HUMAN, opts(dir, "sleep", ["1000"]));
      assert.equal(b.id, "pty:17");
      // Closing one frees a slot.
      await reg.close(A, opened[0].id);
      await reg.open("A", HUMAN, opts(dir, "sleep", ["1000"]));
      await reg.closeAll();
      for (const { pty } of opened) assert.equal(processExists(pty.pid), false);
      assert.deepEqual(reg.list(A), []);
    } finally {
      await reg.closeAll();
    }
  });
});

Deno.test("K-PTY-6 list is ascending, has no screens and does not consume changed", async () => {
  await withTempDir(async (dir) => {
    const reg = new PtyRegistry(() => {});
    try {
      const a = await reg.open("A", HUMAN, opts(dir, "sh", ["-c", "echo hi; exec sleep 1000"]));
      const b = await reg.open("A", HUMAN, {
        ...opts(dir, "sleep", ["1000"]),
        cols: 100,
        rows: 30,
      });
      await waitForScreen(a.pty, (s) => s.screen.includes("hi"));
      assert.deepEqual(reg.list(A), [
        {
          pty_id: a.id,
          cmd: "sh -c echo hi; exec sleep 1000",
          pid: a.pty.pid,
          cols: 80,
          rows: 24,
          alive: true,
        },
        { pty_id: b.id, cmd: "sleep 1000", pid: b.pty.pid, cols: 100, rows: 30, alive: true },
      ]);
      assert.equal((await reg.read(A, b.id)).changed, true);
      reg.list(A);
      assert.equal((await reg.read(A, b.id)).changed, false);
    } finally {
      await reg.closeAll();
    }
  });
});

Deno.test("K-PTY-2/3/4 send, read and resize return the wire shapes", async () => {
  await withTempDir(async (dir) => {
    const reg = new PtyRegistry(() => {});
    try {
      const { id } = await reg.open("A", HUMAN, opts(dir, "bash", ["--norc", "-i"]));
      assert.deepEqual(await reg.send(A, id, ["echo $((6*7))", { key: "Enter" }]), {
        pty_id: id,
        sent: 14,
      });
      await assert.rejects(reg.send(A, id, { key: "Nope" }), hasCode(ErrorCode.INVALID_PARAMS));
      const entry = reg.get(A, id);
      await waitForScreen(entry.pty, (s) => s.screen.includes("42"));
      const read = await reg.read(A, id);
      assert.equal(read.pty_id, id);
      assert.deepEqual(Object.keys(read).sort(), [
        "alive",
        "changed",
        "cmd",
        "cols",
        "cursor",
        "exit",
        "pid",
        "pty_id",
        "rows",
        "screen",
      ]);
      assert.deepEqual(reg.resize(A, id, 2000, 0), { pty_id: id, cols: 1000, rows: 1 });
    } finally {
      await reg.closeAll();
    }
  });
});

Deno.test("K-PTY-13 events are published on pty.N with pty_id", async () => {
  await withTempDir(async (dir) => {
    const events: [string, PtyEventPayload][] = [];
    const reg = new PtyRegistry((channel, payload) => events.push([channel, payload]));
    try {
      const { id, channel, pty } = await reg.open(
        "A",
        HUMAN,
        opts(dir, "sh", ["-c", "echo hi; exit 4"]),
      );
      await waitForScreen(pty, (s) => !s.alive);
      // The exit is announced up to 50 ms after alive turns false (the event rate bound), and a
      // grid change may be announced before it: wait for the exit's own event.
      await waitForScreen(pty, () => events.some(([, p]) => !p.alive));
      assert.deepEqual(events.at(-1), [channel, {
        pty_id: id,
        alive: false,
        exit: { status: 4, signal: null },
      }]);
      assert.ok(events.every(([c, p]) => c === channel && p.pty_id === id));
    } finally {
      await reg.closeAll();
    }
  });
});

Deno.test("K-PTY-7/P-SBX-7 a principal other than the session's human reaches only the PTYs it opened; the human reaches all", async () => {
  await withTempDir(async (dir) => {
    const reg = new PtyRegistry(() => {});
    try {
      const human = await reg.open("A", HUMAN, opts(dir, "sleep", ["1000"]));
      const own = await reg.open("A", "agent:a", opts(dir, "sleep", ["1000"]));
      const agent = { session: "A", principal: "agent:a" };
      const other = { session: "A", principal: "agent:b" };
      assert.throws(() => reg.get(agent, human.id), hasCode(ErrorCode.UNKNOWN_PTY));
      await assert.rejects(reg.read(agent, human.id), hasCode(ErrorCode.UNKNOWN_PTY));
      await assert.rejects(reg.send(agent, human.id, "x"), hasCode(ErrorCode.UNKNOWN_PTY));
      assert.throws(() => reg.resize(agent, human.id, 10, 10), hasCode(ErrorCode.UNKNOWN_PTY));
      await assert.rejects(reg.close(agent, human.id), hasCode(ErrorCode.UNKNOWN_PTY));
      await assert.rejects(reg.send(other, own.id, "x"), hasCode(ErrorCode.UNKNOWN_PTY));
      assert.deepEqual(reg.list(agent).map((p) => p.pty_id), [own.id]);
      assert.deepEqual(reg.list(other), []);
      assert.deepEqual(reg.list(A).map((p) => p.pty_id), [human.id, own.id]);
      assert.equal((await reg.send(A, own.id, "x")).sent, 1);
      assert.equal((await reg.send(agent, own.id, "y")).sent, 1);
      assert.equal(processExists(human.pty.pid), true);
    } finally {
      await reg.closeAll();
    }
  });
});
