import assert from "node:assert/strict";
import { ErrorCode, RpcError } from "../../../src/protocol/errors.ts";
import { Pty, type PtyState } from "../../../src/kernel/pty/pty.ts";
import { openPty, processExists, rssMiB, send, testEnv, waitForScreen } from "./_helpers.ts";
import { foregroundCommand, psField } from "../../_support/proc.ts";
import { withTempDir } from "../../_support/temp_dir.ts";
import { waitUntil } from "../../_support/wait.ts";

const hasRow = (row: string) => (s: { screen: string[] }) => s.screen.includes(row);

async function closeAfter(pty: Pty, body: () => Promise<void>): Promise<void> {
  try {
    await body();
  } finally {
    await pty.close();
  }
}

Deno.test("K-PTY-1/3/9 bash on a real tty: arithmetic, stty size, tty name", async () => {
  await withTempDir(async (dir) => {
    const pty = await openPty(dir, "bash", ["--norc", "-i"]);
    await closeAfter(pty, async () => {
      assert.equal(pty.cmd, "bash --norc -i");
      await send(pty, ["echo $((6*7))", { key: "Enter" }]);
      const s = await waitForScreen(pty, hasRow("42"));
      assert.equal(s.screen.length, 24);
      assert.equal(s.alive, true);
      assert.equal(s.exit, null);
      assert.equal(s.pid, pty.pid);
      assert.deepEqual([s.cols, s.rows], [80, 24]);
      assert.ok(s.screen.every((row) => row === row.trimEnd()));
      await send(pty, ["stty size; tty", { key: "Enter" }]);
      // Wait for the prompt after the output too: a read may come between the two.
      const t = await waitForScreen(pty, (x) => {
        const tty = x.screen.findIndex((r) => /^\/dev\/(pts\/\d+|ttys\d+)$/.test(r));
        return tty >= 0 && x.screen.findLastIndex((r) => r !== "") > tty;
      });
      assert.ok(t.screen.includes("24 80"));
      // The cursor sits after the prompt of the last non-empty row.
      const last = t.screen.findLastIndex((r) => r !== "");
      assert.deepEqual(t.cursor, { row: last, col: t.screen[last].length + 1, hidden: false });
    });
  });
});

Deno.test("K-PTY-1 the child is session leader and its own process group", async () => {
  await withTempDir(async (dir) => {
    const pty = await openPty(dir, "sh", ["-c", "exec sleep 1000"]);
    await closeAfter(pty, async () => {
      // `ps` reads the same on Linux and macOS; wait until the launcher has exec'd the program.
      assert.ok(await waitUntil(() => psField(pty.pid, "comm")?.endsWith("sleep") ?? false, 10000));
      assert.equal(Number(psField(pty.pid, "pgid")), pty.pid);
      // Its own group is the foreground group of its controlling terminal: the PTY.
      assert.equal(Number(psField(pty.pid, "tpgid")), pty.pid);
      assert.match(psField(pty.pid, "tty") ?? "", /^(pts\/\d+|ttys\d+)$/);
      // procps shows the session id; macOS's ps shows no session id for it to be compared.
      if (Deno.build.os === "linux") assert.equal(Number(psField(pty.pid, "sess")), pty.pid);
    });
  });
});

Deno.test("K-PTY-4 resize reaches the child (SIGWINCH, stty size) and the emulator", async () => {
  await withTempDir(async (dir) => {
    const script =
      "trap 'echo \"winch $(stty size)\"' WINCH; echo ready; while :; do sleep 0.05; done";
    const pty = await openPty(dir, "sh", ["-c", script]);
    await closeAfter(pty, async () => {
      await waitForScreen(pty, hasRow("ready"));
      pty.resize(100, 30);
      const s = await waitForScreen(pty, hasRow("winch 30 100"));
      assert.equal(s.screen.length, 30);
      assert.deepEqual([s.cols, s.rows], [100, 30]);
    });
  });
});

Deno.test("K-PTY-4/K-PTY-9 narrowing a screen whose lines rewrap into more rows than it has shows its bottom rows, the cursor on its own empty row, and later output where the program writes it (found by probe18: the emulator's view ran one row past its buffer, so the cursor's row showed a line scrolled off and output landed a row off)", async () => {
  await withTempDir(async (dir) => {
    const script = `printf 'ab\\ncdefgh\\n'; read x; echo "$x"; exec sleep 1000`;
    const pty = await openPty(dir, "sh", ["-c", script], { cols: 10, rows: 4 });
    await closeAfter(pty, async () => {
      await waitForScreen(pty, hasRow("cdefgh"));
      pty.resize(2, 4);
      const narrow = await pty.read();
      assert.deepEqual(narrow.screen, ["cd", "ef", "gh", ""]);
      assert.deepEqual(narrow.cursor, { row: 3, col: 0, hidden: false });
      // the echo of "z", then the program's own line
      await send(pty, ["z", { key: "Enter" }]);
      // both lines ended: "z" and its line break may come in two reads
      const after = await waitForScreen(
        pty,
        (s) => s.screen.filter((r) => r === "z").length === 2 && s.cursor.row === 3,
      );
      assert.deepEqual(after.screen, ["gh", "z", "z", ""]);
      assert.deepEqual(after.cursor, { row: 3, col: 0, hidden: false });
    });
  });
});

Deno.test("K-PTY-4 sizes are clamped to 1..1000 at open and resize", async () => {
  await withTempDir(async (dir) => {
    const pty = await openPty(dir, "sleep", ["1000"], { cols: 0, rows: 5000 });
    await closeAfter(pty, async () => {
      assert.deepEqual([pty.cols, pty.rows], [1, 1000]);
      assert.equal((await pty.read()).screen.length, 1000);
      pty.resize(-3, 2.5);
      assert.deepEqual([pty.cols, pty.rows], [1, 2]);
      assert.equal((await pty.read()).screen.length, 2);
    });
  });
});

Deno.test("K-PTY-10 changed: first read, after output, not when unchanged, after resize", async () => {
  await withTempDir(async (dir) => {
    const pty = await openPty(dir, "sh", ["-c", "echo hello; exec sleep 1000"]);
    await closeAfter(pty, async () => {
      const first = await pty.read();
      assert.equal(first.changed, true);
      await waitForScreen(pty, hasRow("hello"));
      assert.equal((await pty.read()).changed, false);
      pty.resize(60, 20);
      assert.equal((await pty.read()).changed, true);
      assert.equal((await pty.read()).changed, false);
    });
  });
});

Deno.test("K-PTY-11 python3 -q: print, then Ctrl-D ends it with status 0 and it is reaped", async () => {
  await withTempDir(async (dir) => {
    const pty = await openPty(dir, "python3", ["-q"]);
    await closeAfter(pty, async () => {
      await send(pty, "print(6*7)\r");
      await waitForScreen(pty, hasRow("42"));
      await send(pty, { key: "Ctrl-D" });
      const s = await waitForScreen(pty, (x) => !x.alive);
      assert.deepEqual(s.exit, { status: 0, signal: null });
      assert.equal(processExists(pty.pid), false);
      // Still readable after exit (K-PTY-11), writes now fail with -32603 (K-PTY-2).
      assert.ok((await pty.read()).screen.includes("42"));
      await assert.rejects(
        pty.write(new TextEncoder().encode("x")),
        (e: unknown) => e instanceof RpcError && e.code === ErrorCode.INTERNAL_ERROR,
      );
    });
  });
});

Deno.test("K-PTY-12 Ctrl-C interrupts the foreground job of an interactive bash", async () => {
  await withTempDir(async (dir) => {
    const pty = await openPty(dir, "bash", ["--norc", "-i"]);
    await closeAfter(pty, async () => {
      await send(pty, ["sleep 1000", { key: "Enter" }]);
      await waitForScreen(pty, hasRow("$ sleep 1000"));
      // The echo comes before bash starts the job: Ctrl-C must wait until sleep is in the foreground.
      assert.ok(await waitUntil(() => foregroundCommand(pty.pid) === "sleep", 10000));
      await send(pty, { key: "C-c" });
      await send(pty, ["echo status=$?", { key: "Enter" }]);
      await waitForScreen(pty, hasRow("status=130"));
    });
  });
});

Deno.test("K-PTY-8 vi shows its UI, arrows use DECCKM forms, :q! exits", async () => {
  await withTempDir(async (dir) => {
    await Deno.writeTextFile(`${dir}/notes.txt`, "first line\nsecond line\n");
    const pty = await openPty(dir, "vi", ["-u", "NONE", "-N", "notes.txt"]);
    await closeAfter(pty, async () => {
      // vi may show its message line before it draws the text: a read can come between the two
      const s = await waitForScreen(
        pty,
        (x) => x.screen.at(-1)!.includes('"notes.txt"') && x.screen[2] !== "",
      );
      assert.deepEqual(s.screen.slice(0, 2), ["first line", "second line"]);
      assert.equal(s.screen[2], "~");
      assert.equal(pty.applicationCursorKeys, true);
      await send(pty, [{ key: "Down" }, "x"]);
      await waitForScreen(pty, hasRow("econd line"));
      await send(pty, [{ key: "Escape" }, ":q!", { key: "Enter" }]);
      const end = await waitForScreen(pty, (x) => !x.alive);
      assert.deepEqual(end.exit, { status: 0, signal: null });
      assert.equal(await Deno.readTextFile(`${dir}/notes.txt`), "first line\nsecond line\n");
    });
  });
});

Deno.test("K-PTY-8 less pages a generated file and q exits", async () => {
  await withTempDir(async (dir) => {
    const lines = Array.from({ length: 200 }, (_, i) => `line ${i + 1}`);
    await Deno.writeTextFile(`${dir}/big.txt`, lines.join("\n") + "\n");
    const pty = await openPty(dir, "less", ["big.txt"]);
    await closeAfter(pty, async () => {
      const s = await waitForScreen(pty, (x) => x.screen[0] === "line 1");
      assert.deepEqual(s.screen.slice(0, 23), lines.slice(0, 23));
      await send(pty, { key: "Space" });
      await waitForScreen(pty, (x) => x.screen[0] === "line 24");
      await send(pty, "q");
      const end = await waitForScreen(pty, (x) => !x.alive);
      assert.deepEqual(end.exit, { status: 0, signal: null });
    });
  });
});

Deno.test("K-PTY-9 cursor.hidden follows DECTCEM", async () => {
  await withTempDir(async (dir) => {
    const pty = await openPty(dir, "sh", [
      "-c",
      "printf 'a\\033[?25l'; read x; printf 'b\\033[?25h'; read x",
    ]);
    await closeAfter(pty, async () => {
      const hidden = await waitForScreen(pty, hasRow("a"));
      assert.equal(hidden.cursor.hidden, true);
      await send(pty, "\r");
      const shown = await waitForScreen(pty, (x) => x.screen.includes("b"));
      assert.equal(shown.cursor.hidden, false);
    });
  });
});

Deno.test("K-PTY-9 a wide character appears once", async () => {
  await withTempDir(async (dir) => {
    const env = { ...testEnv(dir), LANG: "C.UTF-8" };
    const pty = await Pty.open({
      cmd: "sh",
      args: ["-c", "printf '\\345\\255\\227x\\n'; exec sleep 1000"],
      cwd: dir,
      env,
      cols: 80,
      rows: 24,
      sandbox: null,
    });
    await closeAfter(pty, async () => {
      const s = await waitForScreen(pty, hasRow("字x"));
      assert.equal(s.screen[0], "字x");
    });
  });
});

Deno.test({
  name:
    "K-PTY-9 bytes that are not UTF-8 show as U+FFFD, as a terminal shows them, not as nothing [ignored: found by probe18; needs a SPEC decision: @xterm/headless, which K-PTY-8 names, drops them, so printf 'a\\377b' reads as 'ab': a binary file an agent cats looks like clean text, where xterm and VTE show a replacement character for each]",
  ignore: true,
  fn: async () => {
    await withTempDir(async (dir) => {
      const env = { ...testEnv(dir), LANG: "C.UTF-8" };
      const pty = await Pty.open({
        cmd: "sh",
        args: ["-c", "printf 'a\\377b\\300\\200c\\n'; exec sleep 1000"],
        cwd: dir,
        env,
        cols: 80,
        rows: 24,
        sandbox: null,
      });
      await closeAfter(pty, async () => {
        const s = await waitForScreen(pty, (x) => x.screen[0] !== "");
        assert.match(s.screen[0], /^a\uFFFD+b\uFFFD+c$/);
      });
    });
  },
});

Deno.test("K-PTY-1 TERM=xterm-256color only when the environment has no TERM", async () => {
  await withTempDir(async (dir) => {
    const a = await openPty(dir, "sh", ["-c", 'echo "T=$TERM"']);
    await closeAfter(a, async () => {
      await waitForScreen(a, hasRow("T=xterm-256color"));
    });
    const env = { ...testEnv(dir), TERM: "dumb" };
    const b = await Pty.open({
      cmd: "sh",
      args: ["-c", 'echo "T=$TERM"'],
      cwd: dir,
      env,
      cols: 80,
      rows: 24,
      sandbox: null,
    });
    await closeAfter(b, async () => {
      await waitForScreen(b, hasRow("T=dumb"));
    });
  });
});

Deno.test("K-PTY-1 a program that cannot be started fails with -32023 and data.cmd", async () => {
  await withTempDir(async (dir) => {
    const isSpawnFailure = (cmd: string) => (e: unknown) =>
      e instanceof RpcError && e.code === ErrorCode.PTY_SPAWN_FAILED &&
      (e.data as { cmd: string }).cmd === cmd;
    await assert.rejects(
      openPty(dir, "no-such-program-shoal", []),
      isSpawnFailure("no-such-program-shoal"),
    );
    await assert.rejects(openPty(dir, "./missing.sh", []), isSpawnFailure("./missing.sh"));
    await assert.rejects(openPty(`${dir}/gone`, "sh", []), isSpawnFailure("sh"));
  });
});

Deno.test("K-PTY-5 close of a running program: SIGHUP, reaped, nothing left", async () => {
  await withTempDir(async (dir) => {
    const pty = await openPty(dir, "sleep", ["1000"]);
    assert.equal(processExists(pty.pid), true);
    const exit = await pty.close();
    assert.deepEqual(exit, { status: null, signal: "SIGHUP" });
    assert.equal(processExists(pty.pid), false);
    assert.equal(pty.alive, false);
    assert.deepEqual(await pty.close(), exit);
  });
});

Deno.test("K-PTY-5 close kills what ignores SIGHUP, including the rest of the group", async () => {
  await withTempDir(async (dir) => {
    const script = 'trap "" HUP; sleep 1000 & echo "bg=$!"; exec sleep 1001';
    const pty = await openPty(dir, "sh", ["-c", script]);
    const s = await waitForScreen(pty, (x) => x.screen.some((r) => r.startsWith("bg=")));
    const bg = Number(s.screen.find((r) => r.startsWith("bg="))!.slice(3));
    assert.equal(processExists(bg), true);
    const exit = await pty.close();
    assert.deepEqual(exit, { status: null, signal: "SIGKILL" });
    assert.equal(processExists(pty.pid), false);
    // The orphaned background sleep is reaped by init; it must at least be dead.
    const state = psField(bg, "stat")?.[0] ?? "gone";
    assert.ok(state === "gone" || state === "Z", `background sleep still ${state}`);
  });
});

Deno.test("K-PTY-5 close kills what is left of the group after the program itself has exited", async () => {
  await withTempDir(async (dir) => {
    // the program exits at once; its background sleep ignores the hangup of the session's end
    const script = 'trap "" HUP; sleep 1000 & echo "bg=$!"';
    const pty = await openPty(dir, "sh", ["-c", script]);
    const s = await waitForScreen(pty, (x) => x.screen.some((r) => r.startsWith("bg=")));
    const bg = Number(s.screen.find((r) => r.startsWith("bg="))!.slice(3));
    try {
      assert.ok(await waitUntil(() => !pty.alive, 10000), "the program did not end");
      assert.equal(processExists(bg), true);
      await pty.close();
      const state = psField(bg, "stat")?.[0] ?? "gone";
      assert.ok(state === "gone" || state === "Z", `background sleep still ${state} after close`);
    } finally {
      try {
        Deno.kill(bg, "SIGKILL");
      } catch {
        // closed with the PTY
      }
    }
  });
});

Deno.test("K-PTY-11 the program's exit is recorded although a job it left keeps writing to the terminal", async () => {
  await withTempDir(async (dir) => {
    // each job ignores the hangup of the session's end and writes without end: a flood, a trickle
    for (const job of ["yes flood", "while :; do echo t; sleep 0.005; done"]) {
      const pty = await openPty(dir, "sh", ["-c", `trap "" HUP; ${job} & sleep 0.2; exit 3`]);
      await closeAfter(pty, async () => {
        assert.ok(await waitUntil(() => !processExists(pty.pid), 10000), "the program did not end");
        const s = await waitForScreen(pty, (x) => !x.alive);
        assert.deepEqual(s.exit, { status: 3, signal: null });
      });
    }
  });
});

Deno.test({
  name:
    "K-PTY-5 close leaves nothing of the terminal's session running, also a job that job control moved to a group of its own and that ignores the hangup (`disown`: the shell does not hang it up)",
  fn: async () => {
    await withTempDir(async (dir) => {
      // set -m: job control, as in an interactive shell; the job ignores the hangup
      const script = 'set -m; trap "" HUP; sleep 1000 & echo "bg=$!"; disown; exec sleep 1001';
      const pty = await openPty(dir, "bash", ["-c", script]);
      const s = await waitForScreen(pty, (x) => x.screen.some((r) => r.startsWith("bg=")));
      const bg = Number(s.screen.find((r) => r.startsWith("bg="))!.slice(3));
      try {
        assert.notEqual(psField(bg, "pgid"), String(pty.pid));
        await pty.close();
        const state = psField(bg, "stat")?.[0] ?? "gone";
        assert.ok(state === "gone" || state === "Z", `the job still ${state} after close`);
      } finally {
        try {
          Deno.kill(bg, "SIGKILL");
        } catch {
          // closed with the PTY
        }
      }
    });
  },
});

Deno.test("K-PTY-13 events: throttled grid changes while alive, one exit event last", async () => {
  await withTempDir(async (dir) => {
    const pty = await openPty(dir, "bash", ["--norc", "-i"]);
    const events: PtyState[] = [];
    pty.onEvent((e) => events.push(e));
    await closeAfter(pty, async () => {
      await send(pty, ["echo one", { key: "Enter" }]);
      await waitForScreen(pty, hasRow("one"));
      await waitForScreen(pty, () => events.length > 0);
      assert.deepEqual(events[0], { alive: true, exit: null });
      await send(pty, ["exit 3", { key: "Enter" }]);
      await waitForScreen(pty, (x) => !x.alive);
      await waitForScreen(pty, () => events.some((e) => !e.alive));
      const exits = events.filter((e) => !e.alive);
      assert.deepEqual(exits, [{ alive: false, exit: { status: 3, signal: null } }]);
      assert.equal(events.at(-1)!.alive, false);
    });
  });
});

/**
 * A grid change's timer that came due while the exit was being recorded fired before the exit's
 * own announcement and, the child being gone by then, announced the exit a first time. The race
 * shows only now and then, most often when output flows until the exit (a grid timer is always
 * pending then), so this test ends 40 floods with an exit, 10 at a time: before the fix it
 * failed 6 runs of 8 here (some PTY announced its exit twice).
 */
Deno.test("K-PTY-13 the exit is announced once, also when output flows until the child exits", async () => {
  await withTempDir(async (dir) => {
    const floodThenExit = async (bytes: number) => {
      const pty = await openPty(dir, "sh", [
        "-c",
        `head -c ${bytes} /dev/zero | tr '\\0' a; exit 3`,
      ]);
      const events: PtyState[] = [];
      pty.onEvent((e) => events.push(e));
      await closeAfter(pty, async () => {
        await waitForScreen(pty, () => events.some((e) => !e.alive));
        // past the 50 ms event interval: a second announcement would have come by now
        await new Promise((r) => setTimeout(r, 100));
      });
      return events.filter((e) => !e.alive).length;
    };
    for (let round = 0; round < 4; round++) {
      const sizes = Array.from({ length: 10 }, (_, i) => 100_000 + (round * 10 + i) * 10_000);
      assert.deepEqual(await Promise.all(sizes.map(floodThenExit)), sizes.map(() => 1));
    }
  });
});

Deno.test("K-PTY-8 50 MB of output: rendered with bounded memory while other work is served", async () => {
  await withTempDir(async (dir) => {
    const before = rssMiB();
    let peak = before;
    const events: number[] = [];
    const pty = await openPty(dir, "sh", ["-c", "yes | head -c 50000000; echo DONE"]);
    pty.onEvent(() => events.push(performance.now()));
    const started = performance.now();
    let ticksWhileFlowing = 0;
    const ticker = setInterval(() => {
      peak = Math.max(peak, rssMiB());
      if (pty.alive) ticksWhileFlowing++;
    }, 10);
    await closeAfter(pty, async () => {
      let readsWhileFlowing = 0;
      let sawFlood = false;
      while (true) {
        const s = await pty.read();
        if (!s.alive) break;
        readsWhileFlowing++;
        sawFlood ||= s.screen.filter((r) => r === "y").length >= 20;
        await new Promise((r) => setTimeout(r, 20));
      }
      clearInterval(ticker);
      const end = await pty.read();
      assert.deepEqual(end.exit, { status: 0, signal: null });
      assert.equal(end.screen.at(-2), "DONE");
      assert.ok(sawFlood, "reads saw the output while it was flowing");
      assert.ok(
        readsWhileFlowing >= 5,
        `only ${readsWhileFlowing} reads completed during the flood`,
      );
      assert.ok(ticksWhileFlowing >= 5, `only ${ticksWhileFlowing} timer ticks during the flood`);
      // No byte log: 50 MB (75 MB with CR) through the emulator grows RSS by far less than that.
      assert.ok(peak - before < 100, `RSS grew ${(peak - before).toFixed(1)} MiB`);
      // At most 20 grid events per second (K-PTY-13).
      const seconds = (performance.now() - started) / 1000;
      assert.ok(
        events.length <= Math.ceil(seconds * 20) + 1,
        `${events.length} events in ${seconds}s`,
      );
    }).finally(() => clearInterval(ticker));
  });
});
