/**
 * K-PTY-5: `pty.close` sends SIGKILL 500 ms after the hangup only to what is still alive. A zombie
 * of the PTY's session is not: one that the host's init reaps late (as a sandbox's inner bwrap is,
 * once its outer one left it) made every close wait out the grace. Here the test process stands in
 * for such an init: a child subreaper that reaps nothing until the close answered.
 */
import assert from "node:assert/strict";
import { PTY_KILL_GRACE_MS } from "../../../src/protocol/limits.ts";
import { zombieChildren } from "../../_support/proc.ts";
import { delay } from "../../_support/wait.ts";
import { openPty, waitForScreen } from "./_helpers.ts";

/** Forks a child that ends at once, says `ready` once it ended (not reaping it), sleeps. */
const ENDED_CHILD = String.raw`
import os, time
pid = os.fork()
if pid == 0: os._exit(0)
os.waitid(os.P_PID, pid, os.WEXITED | os.WNOWAIT)
print("ready", flush=True)
time.sleep(30)
`;

/** prctl(2)'s option that makes the caller the parent of its descendants' orphans. */
const PR_SET_CHILD_SUBREAPER = 36;

Deno.test({
  name:
    "K-PTY-5 a PTY program that ends at the hangup, leaving a zombie of its session that nobody reaps yet, is closed without waiting out the SIGKILL grace",
  ignore: Deno.build.os !== "linux",
  async fn() {
    const libc = Deno.dlopen("libc.so.6", {
      prctl: { parameters: ["i32", "u64", "u64", "u64", "u64"], result: "i32" },
      waitpid: { parameters: ["i32", "pointer", "i32"], result: "i32" },
    });
    const dir = await Deno.makeTempDir({ prefix: "shoal-pty-late-reaper-test-" });
    const before = new Set(zombieChildren(Deno.pid));
    try {
      assert.equal(libc.symbols.prctl(PR_SET_CHILD_SUBREAPER, 1n, 0n, 0n, 0n), 0);
      const pty = await openPty(dir, "python3", ["-c", ENDED_CHILD]);
      await waitForScreen(pty, (s) => s.screen.some((row) => row.startsWith("ready")));
      // a close that waits out the grace answers no sooner than its end: ours ends 100 ms before
      const graceOver = delay(PTY_KILL_GRACE_MS - 100).then(() => "the grace (less 100 ms) passed");
      const first = await Promise.race([pty.close().then(() => "closed"), graceOver]);
      assert.ok(ownZombies(before).length > 0, "the session's zombie was left to this process");
      assert.equal(first, "closed");
      await graceOver;
    } finally {
      libc.symbols.prctl(PR_SET_CHILD_SUBREAPER, 0n, 0n, 0n, 0n);
      for (const pid of ownZombies(before)) libc.symbols.waitpid(pid, null, 0);
      libc.close();
      await Deno.remove(dir, { recursive: true });
    }
  },
});

/** This process's zombie children that were not zombies `before`. */
function ownZombies(before: Set<number>): number[] {
  return zombieChildren(Deno.pid).filter((pid) => !before.has(pid));
}
