// Issue 6 through the real kernel over its real socket: pty.open/send/read/resize/close/list on
// real pseudo-terminals, session scoping, pty.N events, the policy gate and bounded memory.
import assert from "node:assert/strict";
import type { PtyScreen } from "../../../src/kernel/pty/pty.ts";
import type { RpcConnection } from "../../../src/protocol/rpc_client.ts";
import { startKernel, startKernelWithAgent, type TestKernel } from "../../_support/kernel.ts";
import { kernelPid, memoryKiB, peakKiB, processLive, psField } from "../../_support/proc.ts";
import { RUNNER } from "../../_support/principals.ts";
import type { Rec } from "../../_support/rec.ts";
import { rpcError } from "../../_support/rejection.ts";
import { delay, waitUntil } from "../../_support/wait.ts";

/** What `pty.read` returns (K-PTY-3). */
type Screen = PtyScreen & { pty_id: string };

const POLL_MS = 20;

/** Kills (by pid) what a failed test left running; the kernel's shutdown closes the rest. */
function killLeftovers(pids: number[]): void {
  for (const pid of pids) {
    if (!processLive(pid)) continue;
    try {
      Deno.kill(pid, "SIGKILL");
    } catch {
      // gone meanwhile
    }
  }
}

/**
 * Runs a test body against a fresh kernel and a connection attached to session `default`; the
 * body records the pids of the PTYs it opens, and those the kernel's shutdown left are killed.
 */
function withPtys(
  name: string,
  body: (conn: RpcConnection, k: TestKernel, pids: number[]) => Promise<void>,
) {
  Deno.test(name, async () => {
    const k = await startKernel();
    const pids: number[] = [];
    try {
      await body(await k.attach(), k, pids);
    } finally {
      await k.cleanup();
      killLeftovers(pids);
    }
  });
}

async function open(
  conn: RpcConnection,
  pids: number[],
  cmd: string,
  args: string[] = [],
  extra: Rec = {},
): Promise<Rec> {
  const r = await conn.request("pty.open", {
    cmd,
    args,
    env: { PS1: "$ ", ...(extra.env as Rec ?? {}) },
    ...extra,
  }) as Rec;
  pids.push(r.pid as number);
  return r;
}

function read(conn: RpcConnection, id: unknown): Promise<Screen> {
  return conn.request("pty.read", { pty_id: id }) as Promise<Screen>;
}

function send(conn: RpcConnection, id: unknown, input: unknown): Promise<Rec> {
  return conn.request("pty.send", { pty_id: id, input }) as Promise<Rec>;
}

/** Types a line and presses Enter. */
function line(conn: RpcConnection, id: unknown, text: string): Promise<Rec> {
  return send(conn, id, [{ text }, { key: "Enter" }]);
}

/** Polls `pty.read` until `match` holds, at most `tries` times; fails with the last screen. */
async function waitScreen(
  conn: RpcConnection,
  id: unknown,
  match: (s: Screen) => boolean,
  tries = 250,
): Promise<Screen> {
  let last: Screen | null = null;
  for (let i = 0; i < tries; i++) {
    last = await read(conn, id);
    if (match(last)) return last;
    await delay(POLL_MS);
  }
  throw new Error(`screen never matched; last:\n${JSON.stringify(last, null, 1)}`);
}

const hasRow = (row: string | RegExp) => (s: Screen) =>
  s.screen.some((r) => typeof row === "string" ? r === row : row.test(r));

withPtys(
  "the first pty.open after kernel start (which loads the emulator) renders and answers terminal queries as later ones do (issue 11)",
  async (conn, _k, pids) => {
    // Output at once, colours, a cursor move, a hidden cursor and a cursor-position query whose
    // answer the line discipline echoes onto the screen.
    const script = "printf '\\033[1;31mred\\033[0m\\n\\033[3;4Hmoved\\033[?25l\\033[6n'; sleep 30";
    const screens = [];
    for (let i = 0; i < 2; i++) {
      const opened = await open(conn, pids, "sh", ["-c", script]);
      const screen = await waitScreen(conn, opened.pty_id, hasRow(/R$/));
      screens.push({ screen: screen.screen, cursor: screen.cursor, alive: screen.alive });
    }
    assert.deepEqual(screens[0].screen.slice(0, 3), ["red", "", "   moved^[[3;9R"]);
    assert.equal(screens[0].cursor.hidden, true);
    assert.deepEqual(screens[1], screens[0]);
  },
);

withPtys(
  "bash -i on a pty: echo $((6*7)) shows a row 42, stty size follows resize, tty is a /dev/pts (macOS: /dev/ttys) device (K-PTY-1..4)",
  async (conn, _k, pids) => {
    const opened = await open(conn, pids, "bash", ["--norc", "-i"]);
    assert.match(opened.pty_id as string, /^pty:[1-9][0-9]*$/);
    assert.equal(opened.cmd, "bash --norc -i");
    assert.equal(opened.cols, 80);
    assert.equal(opened.rows, 24);
    const id = opened.pty_id;
    await waitScreen(conn, id, hasRow(/^\$$/));
    const sent = await line(conn, id, "echo $((6*7))");
    assert.equal(sent.pty_id, id);
    assert.equal(sent.sent, "echo $((6*7))".length + 1);
    const s = await waitScreen(conn, id, hasRow("42"));
    assert.equal(s.screen.length, 24);
    assert.equal(s.alive, true);
    assert.equal(s.exit, null);
    assert.equal(s.pid, opened.pid);
    assert.equal(s.cmd, "bash --norc -i");

    await line(conn, id, "stty size");
    await waitScreen(conn, id, hasRow("24 80"));
    const resized = await conn.request("pty.resize", { pty_id: id, cols: 100, rows: 30 });
    assert.deepEqual(resized, { pty_id: id, cols: 100, rows: 30 });
    const afterResize = await read(conn, id);
    assert.equal(afterResize.changed, true);
    assert.equal(afterResize.screen.length, 30);
    await line(conn, id, "clear; stty size");
    await waitScreen(conn, id, hasRow("30 100"));
    const clamped = await conn.request("pty.resize", { pty_id: id, cols: 5000, rows: 0 });
    assert.deepEqual(clamped, { pty_id: id, cols: 1000, rows: 1 });
    await conn.request("pty.resize", { pty_id: id, cols: 80, rows: 24 });

    await line(conn, id, "clear; tty");
    // The prompt after tty's line is bash's last output: until it is drawn the screen may change.
    await waitScreen(
      conn,
      id,
      (x) => hasRow(/^\/dev\/(pts\/[0-9]+|ttys[0-9]+)$/)(x) && hasRow(/^\$$/)(x),
    );
    const list = await conn.request("pty.list", {}) as Rec;
    assert.deepEqual(list.ptys, [{
      pty_id: id,
      cmd: "bash --norc -i",
      pid: opened.pid,
      cols: 80,
      rows: 24,
      alive: true,
    }]);
    const unchanged = await waitScreen(conn, id, (x) => !x.changed);
    await conn.request("pty.list", {});
    assert.equal((await read(conn, id)).changed, false, JSON.stringify(unchanged.screen));
  },
);

withPtys(
  "python3 -q: print(6*7) shows 42, Ctrl-D ends it with alive false and exit status 0 (K-PTY-3, K-PTY-11)",
  async (conn, _k, pids) => {
    const { pty_id: id, pid } = await open(conn, pids, "python3", ["-q"]);
    await waitScreen(conn, id, hasRow(/^>>>$/));
    await line(conn, id, "print(6*7)");
    await waitScreen(conn, id, hasRow("42"));
    await send(conn, id, { key: "Ctrl-D" });
    const done = await waitScreen(conn, id, (s) => !s.alive);
    assert.deepEqual(done.exit, { status: 0, signal: null });
    assert.equal(processLive(pid as number), false);
    // An exited PTY stays readable until closed.
    assert.equal((await read(conn, id)).alive, false);
    const list = await conn.request("pty.list", {}) as Rec;
    assert.equal((list.ptys as Rec[])[0].alive, false);
    const write = await rpcError(send(conn, id, "x"));
    assert.equal(write.code, -32603);
  },
);

withPtys(
  "vi and less show their full-screen UI on a generated file and exit on :q! and q (K-PTY-8)",
  async (conn, k, pids) => {
    const lines = Array.from({ length: 200 }, (_, i) => `line-${i + 1}`);
    await Deno.writeTextFile(`${k.box.dir}/generated.txt`, lines.join("\n") + "\n");

    const vi = await open(conn, pids, "vi", ["generated.txt"]);
    // vim may show its file message before the text: a read can see that frame, so wait for both.
    const viScreen = await waitScreen(
      conn,
      vi.pty_id,
      (s) => hasRow(/generated\.txt/)(s) && hasRow("line-23")(s),
    );
    assert.equal(viScreen.screen[0], "line-1");
    assert.equal(viScreen.screen.includes("line-30"), false);
    await send(conn, vi.pty_id, [{ key: "Escape" }, { text: ":q!" }, { key: "Enter" }]);
    const viDone = await waitScreen(conn, vi.pty_id, (s) => !s.alive);
    assert.deepEqual(viDone.exit, { status: 0, signal: null });

    const less = await open(conn, pids, "less", ["generated.txt"], { env: { LESS: "" } });
    const lessScreen = await waitScreen(conn, less.pty_id, hasRow("line-23"));
    assert.equal(lessScreen.screen[0], "line-1");
    assert.equal(lessScreen.screen.includes("line-24"), false);
    await send(conn, less.pty_id, { key: "Space" });
    await waitScreen(conn, less.pty_id, hasRow("line-46"));
    await send(conn, less.pty_id, "q");
    const lessDone = await waitScreen(conn, less.pty_id, (s) => !s.alive);
    assert.deepEqual(lessDone.exit, { status: 0, signal: null });
  },
);

withPtys(
  "closing a running sleep 1000 hangs it up, reaps it (gone from ps) and forgets the id: -32022 next (K-PTY-5, K-PTY-7)",
  async (conn, _k, pids) => {
    const { pty_id: id, pid } = await open(conn, pids, "sleep", ["1000"]);
    assert.equal((await read(conn, id)).alive, true);
    assert.equal(processLive(pid as number), true);
    const closed = await conn.request("pty.close", { pty_id: id });
    assert.deepEqual(closed, {
      pty_id: id,
      closed: true,
      exit: { status: null, signal: "SIGHUP" },
    });
    assert.equal(psField(pid as number, "pid"), null, "the child is reaped, not a zombie");
    for (
      const call of [
        () => read(conn, id),
        () => send(conn, id, "x"),
        () => conn.request("pty.close", { pty_id: id }),
        () => conn.request("pty.resize", { pty_id: id, cols: 10, rows: 10 }),
      ]
    ) {
      const e = await rpcError(call());
      assert.equal(e.code, -32022);
    }
    assert.deepEqual(await conn.request("pty.list", {}), { ptys: [] });
  },
);

withPtys(
  "pty.close lets go of the PTY's pty.N events, as a forgotten task's task.N are (K-EVT-7, K-PTY-5, K-TASK-2): a subscriber had the exit, a read after the close finds none, so the rings of closed PTYs do not pile up in a long-lived kernel",
  async (conn, _k, pids) => {
    const { pty_id: id } = await open(conn, pids, "bash", ["--norc", "-c", "echo one; sleep 1000"]);
    const channel = `pty.${(id as string).slice(4)}`;
    const pushed: Rec[] = [];
    conn.onNotification = (method, params) => {
      if (method === "event" && params.channel === channel) pushed.push(params);
    };
    await conn.request("events.subscribe", { channel, since: -1 });
    await waitScreen(conn, id, hasRow("one"));
    const held = async () => ((await conn.request("events.read", { channel, since: -1 }) as Rec)
      .events as Rec[]);
    assert.ok(
      await waitUntil(async () => (await held()).length > 0, 5000),
      "a change was announced",
    );
    await conn.request("pty.close", { pty_id: id });
    assert.ok(
      await waitUntil(() => pushed.some((e) => (e.payload as Rec).alive === false), 5000),
      "the subscriber got the exit",
    );
    assert.deepEqual(await held(), []);
  },
);

withPtys(
  "a PTY belongs to the session that opened it: session B gets -32022 and does not list it (K-PTY-7)",
  async (conn, k, pids) => {
    const { pty_id: id } = await open(conn, pids, "sleep", ["1000"]);
    const other = await k.attach("B");
    for (
      const call of [
        () => read(other, id),
        () => send(other, id, "x"),
        () => other.request("pty.resize", { pty_id: id, cols: 10, rows: 10 }),
        () => other.request("pty.close", { pty_id: id }),
      ]
    ) {
      assert.equal((await rpcError(call())).code, -32022);
    }
    assert.deepEqual(await other.request("pty.list", {}), { ptys: [] });
    // Another connection attached to the same session sees it: PTYs are session-scoped.
    const same = await k.attach("default");
    const listed = (await same.request("pty.list", {}) as Rec).ptys as Rec[];
    assert.deepEqual(listed.map((p) => p.pty_id), [id]);
    assert.equal((await read(conn, id)).alive, true);
  },
);

withPtys(
  "a subscriber to pty.N gets {pty_id, alive, exit} on screen changes and once on exit (K-PTY-13)",
  async (conn, _k, pids) => {
    const { pty_id: id } = await open(conn, pids, "bash", ["--norc", "-i"]);
    const channel = `pty.${(id as string).slice(4)}`;
    const events: Rec[] = [];
    conn.onNotification = (method, params) => {
      if (method === "event" && params.channel === channel) events.push(params);
    };
    assert.deepEqual(await conn.request("events.subscribe", { channel }), {
      channel,
      subscribed: true,
    });
    await waitScreen(conn, id, hasRow(/^\$$/));
    await line(conn, id, "echo ping-$((1+1))");
    await waitScreen(conn, id, hasRow("ping-2"));
    for (let i = 0; i < 250 && events.length === 0; i++) await delay(POLL_MS);
    assert.ok(events.length > 0, "a screen change was announced");
    assert.deepEqual(events[0].payload, { pty_id: id, alive: true, exit: null });
    await line(conn, id, "exit 3");
    for (let i = 0; i < 250 && !events.some((e) => (e.payload as Rec).alive === false); i++) {
      await delay(POLL_MS);
    }
    const last = events.at(-1)!;
    assert.deepEqual(last.payload, { pty_id: id, alive: false, exit: { status: 3, signal: null } });
    const seqs = events.map((e) => e.seq as number);
    assert.deepEqual(seqs, [...seqs].sort((a, b) => a - b));
  },
);

withPtys(
  "50 MB of output in a PTY: session.cwd and exec keep answering meanwhile; kernel RSS grows < 96 MiB, and a second 50 MB adds < 24 MiB (K-PTY-8)",
  async (conn, k, pids) => {
    const pid = kernelPid(k.socket);
    const before = memoryKiB(pid);
    const { pty_id: id } = await open(conn, pids, "sh", [
      "-c",
      "yes | head -c 50000000; echo; echo END-OF-FLOOD",
    ]);
    const other = await k.attach();
    let sampled = before.rss;
    let answeredWhileAlive = 0;
    let alive = true;
    // Other methods on another connection, interleaved with reads of the flooding PTY.
    for (let i = 0; alive && i < 5000; i++) {
      const [cwd, echo] = await Promise.all([
        other.request("session.cwd", {}) as Promise<Rec>,
        other.request("exec", { src: `echo ${i}` }) as Promise<Rec>,
      ]);
      assert.deepEqual(cwd.cwd, { display: k.box.dir });
      assert.deepEqual((echo.value as Rec).out, { $: "int", v: i });
      const s = await read(conn, id);
      alive = s.alive;
      if (alive) answeredWhileAlive++;
      sampled = Math.max(sampled, memoryKiB(pid).rss);
    }
    assert.ok(answeredWhileAlive >= 3, `only ${answeredWhileAlive} round trips during the flood`);
    const done = await waitScreen(conn, id, (s) => !s.alive);
    assert.ok(done.screen.includes("END-OF-FLOOD"), JSON.stringify(done.screen));
    assert.deepEqual(done.exit, { status: 0, signal: null });
    // The reader parses at most 32 KiB per step and keeps no backlog; what remains is V8 heap and
    // JIT warm-up, which measured 24-62 MiB here. Holding the output itself would add the 50 MB on top of that.
    const peak = peakKiB(pid, before, sampled);
    const growthMiB = (peak - before.rss) / 1024;
    assert.ok(growthMiB < 96, `kernel RSS grew by ${growthMiB.toFixed(1)} MiB`);

    // A second 50 MB (without newlines, so it renders faster) must not grow memory in proportion.
    const warm = memoryKiB(pid);
    let warmSampled = warm.rss;
    const second = await open(conn, pids, "sh", ["-c", "head -c 50000000 /dev/zero | tr '\\0' a"]);
    for (let i = 0; i < 3000 && (await read(conn, second.pty_id)).alive; i++) {
      warmSampled = Math.max(warmSampled, memoryKiB(pid).rss);
      await delay(POLL_MS);
    }
    const again = (peakKiB(pid, warm, warmSampled) - warm.rss) / 1024;
    assert.ok(again < 24, `a second 50 MB grew kernel RSS by ${again.toFixed(1)} MiB`);
    assert.equal((await read(conn, second.pty_id)).screen[23], "a".repeat(80));
  },
);

withPtys(
  "pty.open errors: missing program -32023 with data.cmd; bad keys and inputs -32602 (K-PTY-1/2)",
  async (conn, _k, pids) => {
    const missing = await rpcError(conn.request("pty.open", { cmd: "no-such-program-xyz" }));
    assert.equal(missing.code, -32023);
    assert.equal((missing.data as Rec).cmd, "no-such-program-xyz");
    assert.equal((await rpcError(conn.request("pty.open", { cmd: "" }))).code, -32602);
    const { pty_id: id } = await open(conn, pids, "cat");
    assert.equal((await rpcError(send(conn, id, { key: "NoSuchKey" }))).code, -32602);
    assert.equal((await rpcError(send(conn, id, { text: "a", key: "Enter" }))).code, -32602);
    assert.equal((await rpcError(send(conn, id, { bytes: "not base64!" }))).code, -32602);
    const echoed = await send(conn, id, [[{ bytes: btoa("he") }, "llo"], { key: "Enter" }]);
    assert.equal(echoed.sent, 6);
    await waitScreen(conn, id, (s) => s.screen.filter((r) => r === "hello").length === 2);
  },
);

withPtys(
  "pty.open: session cwd, session environment plus env overrides, TERM added when missing, nothing else (K-PTY-1)",
  async (conn, k, pids) => {
    await Deno.mkdir(`${k.box.dir}/sub`);
    await conn.request("exec", { src: "cd sub && export FROM_SESSION=s OVERRIDDEN=session" });
    const session = await conn.request("session.env", {}) as Rec;
    const size = { cols: 1000, rows: 100 };
    const env = await open(conn, pids, "env", [], {
      ...size,
      env: { OVERRIDDEN: "env", EXTRA: "x" },
    });
    const printed = (await waitScreen(conn, env.pty_id, (s) => !s.alive)).screen.filter((r) => r);
    const cwd = Deno.realPathSync(`${k.box.dir}/sub`);
    const expected: Record<string, string> = {
      ...(session.env as Record<string, string>),
      OVERRIDDEN: "env",
      EXTRA: "x",
      TERM: "xterm-256color",
    };
    // Like bash in an exec, the launching shell keeps an inherited PWD pointing at the real cwd.
    if ("PWD" in expected) expected.PWD = cwd;
    assert.deepEqual(
      printed.sort(),
      Object.entries(expected).map(([name, value]) => `${name}=${value}`).sort(),
    );
    const term = await open(conn, pids, "sh", ["-c", 'echo "T=$TERM"; pwd'], {
      env: { TERM: "dumb" },
    });
    const shown = await waitScreen(conn, term.pty_id, (s) => !s.alive);
    assert.deepEqual(shown.screen.slice(0, 2), ["T=dumb", cwd]);
  },
);

withPtys(
  "changed is consumed by any caller's pty.read, on the same or another connection (K-PTY-10)",
  async (conn, k, pids) => {
    const { pty_id: id } = await open(conn, pids, "cat");
    await waitScreen(conn, id, (s) => !s.changed);
    const other = await k.attach();
    assert.equal((await read(other, id)).changed, false);
    await line(conn, id, "hello");
    // The terminal's echo and then cat's copy: a read between the two would leave a change.
    const seen = await waitScreen(
      other,
      id,
      (s) => s.screen.filter((r) => r === "hello").length === 2,
    );
    assert.equal(seen.changed, true);
    // The other connection's read consumed the change.
    assert.equal((await read(conn, id)).changed, false);
    await conn.request("pty.resize", { pty_id: id, cols: 60, rows: 20 });
    assert.equal((await read(other, id)).changed, true);
    assert.equal((await read(conn, id)).changed, false);
  },
);

Deno.test("pty.open obeys the caller's proc_spawn verdict: deny -32010, approval -32011 (K-PTY-1, P-EVAL-4)", async () => {
  const { kernel, token } = await startKernelWithAgent("agent:x", {
    proc_spawn: ["cat"],
    auto_apply: "never",
  });
  try {
    const conn = await kernel.attach("default", token);
    const denied = await rpcError(conn.request("pty.open", { cmd: "bash" }));
    assert.equal(denied.code, -32010);
    assert.equal((denied.data as Rec).verdict, "deny");
    const approval = await rpcError(conn.request("pty.open", { cmd: "cat" }));
    assert.equal(approval.code, -32011);
    // it says what the program does and why that needs approval, as an exec's -32011 does
    assert.deepEqual((approval.data as Rec).effects, [
      { kind: "proc_spawn", argv0: "cat", bin_hash: null },
    ]);
    assert.deepEqual((approval.data as Rec).needs_approval, [
      `every plan (the policy says auto_apply "never")`,
    ]);
    assert.deepEqual(await conn.request("pty.list", {}), { ptys: [] });
    // No plan is stored for a PTY.
    assert.deepEqual(await conn.request("plan.list", {}), []);
  } finally {
    await kernel.cleanup();
  }
});

Deno.test({
  name:
    "J-1 what an agent runs in a terminal it opened leaves a journal row the human can query (its command, or at least the PTY's program) [ignored: found by the probe round; needs a SPEC decision: J-1 journals one row per run exec, and pty.open and pty.send are not runs, so an agent that opens bash in a PTY and types into it (inside its sandbox and grants) leaves nothing in the journal: once the PTY is closed the human's record of what the agent did has a gap]",
  ignore: true,
  fn: async () => {
    const { kernel: k, token } = await startKernelWithAgent("agent:a", RUNNER);
    try {
      const agent = await k.attach("default", token);
      const marker = `${k.box.dir}/typed`;
      const opened = await agent.request("pty.open", { cmd: "bash", args: ["--norc"] }) as Rec;
      await agent.request("pty.send", { pty_id: opened.pty_id, input: `touch ${marker}\n` });
      const typed = await waitUntil(() => {
        try {
          return Deno.statSync(marker).isFile;
        } catch {
          return false;
        }
      }, 10000);
      assert.ok(typed, "what the agent typed ran");
      await agent.request("pty.close", { pty_id: opened.pty_id });
      const human = await k.attach();
      const rows = await human.request("journal.query", { principal: "agent:a" }) as Rec[];
      assert.ok(rows.length > 0, "the agent's terminal work is in the journal");
    } finally {
      await k.cleanup();
    }
  },
});

Deno.test({
  name:
    "K-PTY-8/W-RPC-5 a 1000x1000 PTY whose program fills every cell with a letter and 11 combining marks can still be read [ignored: found by probe18; needs a SPEC decision: a read is at most cols x rows cells, but a cell keeps up to 12 code units (3 bytes each in UTF-8), so the reply grows to 34 MB and W-RPC-5 turns it into -32603 response too large for every later read: the program makes its own screen unreadable; bounding it means showing fewer marks per cell on such a grid (which K-PTY-9 does not provide for) or a smaller bound per cell]",
  ignore: true,
  fn: async () => {
    const k = await startKernel();
    const pids: number[] = [];
    try {
      const conn = await k.attach();
      const script = [
        "import sys, time",
        "row = ('a' + '\\u20d0' * 11) * 1000",
        "for r in range(1000): sys.stdout.write('\\x1b[%d;1H' % (r + 1) + row)",
        "sys.stdout.write('\\x1b[1;1HDONE'); sys.stdout.flush(); time.sleep(60)",
      ].join("\n");
      const opened = await open(conn, pids, "python3", ["-c", script], {
        cols: 1000,
        rows: 1000,
        env: { LANG: "C.UTF-8" },
      });
      const full = await waitScreen(conn, opened.pty_id, (s) => s.screen[999] !== "", 1500);
      assert.ok(full.screen[0].startsWith("DONE"));
    } finally {
      await k.cleanup();
      killLeftovers(pids);
    }
  },
});
