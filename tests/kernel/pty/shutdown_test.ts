/** Kernel shutdown ends every PTY, also one whose `pty.open` was under way when it began (K-PTY-5, G-SOCK-8). */
import assert from "node:assert/strict";
import { startKernel } from "../../_support/kernel.ts";
import type { Rec } from "../../_support/rec.ts";
import { shutdownDuring } from "../../_support/shutdown_race.ts";
import { pollUntil } from "../../_support/wait.ts";

/** A program that ignores the hangup and runs until killed; `marker` names it in its command line. */
const stubborn = (marker: string) => ["-c", 'trap "" HUP; while :; do sleep 1; done', marker];

Deno.test("K-PTY-5/G-SOCK-8 a pty.open under way when the kernel is told to stop leaves no program running and the kernel exits (it registered the PTY after every PTY was closed: the kernel waited for its program forever)", async () => {
  // an open whose program line takes a while to analyse; a PTY open before keeps the shutdown's
  // close of PTYs busy for its 500 ms grace meanwhile
  const many = Array.from({ length: 20000 }, (_, i) => `a${i}`);
  await shutdownDuring(
    (conn, marker) => conn.request("pty.open", { cmd: "sh", args: stubborn(marker) }),
    (conn, marker) => conn.request("pty.open", { cmd: "sh", args: [...stubborn(marker), ...many] }),
    "a PTY's program",
  );
});

Deno.test({
  name:
    "G-SOCK-8 kernel shutdown ends a PTY's program as a task's: SIGTERM, SIGKILL 2000 ms later, so a program that ignores the hangup and cleans up on SIGTERM runs its handler (the kernel closed each PTY as pty.close does, SIGHUP and SIGKILL after 500 ms, and killed it without)",
  fn: async () => {
    const k = await startKernel();
    try {
      const conn = await k.attach();
      const marker = `${k.box.dir}/terminated`;
      const script = `trap '' HUP; trap 'echo term > ${marker}; exit 0' TERM; echo ready; ` +
        "while :; do sleep 0.1; done";
      const opened = await conn.request("pty.open", { cmd: "sh", args: ["-c", script] }) as Rec;
      await pollUntil(
        () => conn.request("pty.read", { pty_id: opened.pty_id }) as Promise<Rec>,
        (r) => (r.screen as string[]).includes("ready"),
      );
      assert.equal(await k.stop(), 0);
      assert.equal(await Deno.readTextFile(marker).catch(() => null), "term\n");
    } finally {
      await k.cleanup();
    }
  },
});
