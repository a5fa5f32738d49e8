/** Announcing a large PTY's grid changes reads only what changed (K-PTY-13). */
import assert from "node:assert/strict";
import { startKernel } from "../../_support/kernel.ts";
import { cpuMs, kernelPid } from "../../_support/proc.ts";
import type { Rec } from "../../_support/rec.ts";
import { delay, pollUntil } from "../../_support/wait.ts";
import { withTempDir } from "../../_support/temp_dir.ts";
import { openPty, send, waitForScreen } from "./_helpers.ts";

/** Fills a 1000×1000 grid, says ready, waits for `go`, then changes one cell 100 times. */
const TICKER = [
  "import os, sys, time",
  "sys.stdout.write(('x' * 999 + '\\r\\n') * 999 + 'ready')",
  "sys.stdout.flush()",
  "while not os.path.exists(sys.argv[1]): time.sleep(0.01)",
  "for i in range(100):",
  "    sys.stdout.write('\\x1b[1;1H%d' % (i % 10)); sys.stdout.flush(); time.sleep(0.02)",
].join("\n");

Deno.test("K-PTY-13 two 1000×1000 PTYs whose programs change one cell 100 times cost the kernel little CPU: each event's look read every row of the grid (7-38 ms at this size, one per 50 ms), so four such PTYs took 74% of a core and their events alone most of it (12% now)", async () => {
  const k = await startKernel();
  try {
    const conn = await k.attach();
    const pid = kernelPid(k.socket);
    const go = `${k.box.dir}/go`;
    const ids: unknown[] = [];
    for (let i = 0; i < 2; i++) {
      const opened = await conn.request("pty.open", {
        cmd: "python3",
        args: ["-c", TICKER, go],
        cols: 1000,
        rows: 1000,
      }) as Rec;
      ids.push(opened.pty_id);
      await pollUntil(
        () => conn.request("pty.read", { pty_id: opened.pty_id }) as Promise<Rec>,
        (r) => (r.screen as string[])[999] === "ready",
      );
    }
    await delay(200); // the events of the fill announced
    const seqs = async () => {
      const read = await conn.request("events.read", { channel: "pty.1" }) as Rec;
      return (read.events as Rec[]).length;
    };
    const eventsBefore = await seqs();
    const before = cpuMs(pid);
    await Deno.writeTextFile(go, "");
    for (let alive = true; alive;) {
      await delay(50);
      const listed = await conn.request("pty.list", {}) as Rec;
      alive = (listed.ptys as Rec[]).some((p) => p.alive === true);
    }
    const used = cpuMs(pid) - before;
    // 200 changes of one cell: before, about 80 looks at a million cells each
    assert.ok(used < 500, `the kernel used ${used} ms of CPU`);
    // each change still announced (at most 20/s): 100 changes over 2 s or more
    const announced = await seqs() - eventsBefore;
    assert.ok(announced >= 20, `${announced} events of the changes`);
    for (const id of ids) await conn.request("pty.close", { pty_id: id });
  } finally {
    await k.cleanup();
  }
});

Deno.test("K-PTY-13 a change the emulator marks as every row's (the alternate screen, then back) is announced, and output that leaves the grid as it was is not", async () => {
  await withTempDir(async (dir) => {
    const script = "printf main; read a; printf '\\033[?1049h'; read b; printf '\\033[?1049l'; " +
      "read c; printf '\\033[1;1Hmain'; sleep 30";
    const pty = await openPty(dir, "sh", ["-c", `stty -echo; ${script}`], { cols: 20, rows: 4 });
    try {
      const seen: boolean[] = [];
      pty.onEvent((state) => seen.push(state.alive));
      await waitForScreen(pty, (s) => s.screen[0] === "main");
      await delay(200);
      const events = () => seen.length;
      for (const [step, screen] of [["a", ""], ["b", "main"], ["c", "main"]] as const) {
        const before = events();
        await send(pty, [step, { key: "Enter" }]);
        await waitForScreen(pty, (s) => s.screen[0] === screen);
        await delay(200); // past the events' 50 ms
        // the alternate screen and the way back change the grid; rewriting "main" does not
        assert.equal(events() - before, step === "c" ? 0 : 1, `events after step ${step}`);
      }
    } finally {
      await pty.close();
    }
  });
});
