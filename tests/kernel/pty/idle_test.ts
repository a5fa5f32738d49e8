import assert from "node:assert/strict";
import { fdWaiterAvailable } from "../../../src/kernel/bash/fd_waiter.ts";
import type { Pty } from "../../../src/kernel/pty/pty.ts";
import { openPty, processExists, send, waitForScreen } from "./_helpers.ts";
import { threadsInPoll } from "../../_support/proc.ts";
import { withTempDir } from "../../_support/temp_dir.ts";
import { delay } from "../../_support/wait.ts";

/** More idle PTYs than the few threads any of them may hold. */
const IDLE_PTYS = 20;

Deno.test({
  name: "idle PTYs wait for output in one shared poll, not on a thread each",
  ignore: threadsInPoll(Deno.pid) === null || !fdWaiterAvailable(),
  fn: async () => {
    await withTempDir(async (dir) => {
      const ptys: Pty[] = [];
      try {
        for (let i = 0; i < IDLE_PTYS; i++) {
          const pty = await openPty(dir, "sh", ["-c", `echo ready-${i}; exec sleep 1000`]);
          ptys.push(pty);
          await waitForScreen(pty, (s) => s.screen.includes(`ready-${i}`));
        }
        // Several samples: a reader that polls with a timeout is out of poll only briefly.
        let most = 0;
        for (let i = 0; i < 10; i++) {
          most = Math.max(most, threadsInPoll(Deno.pid)!);
          await delay(20);
        }
        assert.ok(most <= 3, `${most} threads in poll with ${IDLE_PTYS} idle PTYs`);
        // Each still hears its program, and a close ends a reader that waits in the shared poll.
        const last = ptys.at(-1)!;
        await send(last, { key: "C-c" });
        await waitForScreen(last, (s) => !s.alive);
      } finally {
        for (const pty of ptys) await pty.close();
      }
      assert.ok(ptys.every((p) => !processExists(p.pid)));
    });
  },
});

Deno.test("a child that exits while a background process holds the slave: exit and output kept", async () => {
  await withTempDir(async (dir) => {
    const pty = await openPty(dir, "sh", ["-c", "sleep 1000 & echo bg=$!; echo bye; exit 4"]);
    try {
      const s = await waitForScreen(pty, (x) => !x.alive);
      assert.deepEqual(s.exit, { status: 4, signal: null });
      assert.ok(s.screen.includes("bye"), s.screen.join("\n"));
      const bg = Number(s.screen.find((r) => r.startsWith("bg="))!.slice(3));
      // The background sleep still holds the slave: the exit was noticed without a hangup.
      assert.equal(processExists(bg), true);
      Deno.kill(bg, "SIGKILL");
    } finally {
      await pty.close();
    }
  });
});
