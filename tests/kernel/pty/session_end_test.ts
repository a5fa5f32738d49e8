/**
 * K-PTY-5: `pty.close` sends SIGKILL, after the hangup's grace, only to what of the PTY's session is
 * still alive. A zombie is not: a sandboxed PTY's inner bwrap, which its outer one leaves to the
 * host's init, stays one until that init reaps it, and an init that reaps late (seen here: seconds)
 * made every close of a sandboxed PTY wait out the whole grace, for a group of zombies. Here the test
 * process stands in for such an init: a child subreaper that reaps nothing until it has looked.
 */
import assert from "node:assert/strict";
import { within } from "../../../src/protocol/within.ts";
import { endLeaderlessSession } from "../../../src/kernel/pty/session_end.ts";
import { sessionEndedWithin, sessionGoneWithin } from "../../../src/kernel/bash/group_leader.ts";
import { zombieChildren } from "../../_support/proc.ts";

/** Leads a session, forks a child that ends at once, and exits once it has, not reaping it. */
const LEAVES_ZOMBIE = String.raw`
import os
pid = os.fork()
if pid == 0: os._exit(0)
os.waitid(os.P_PID, pid, os.WEXITED | os.WNOWAIT)
`;

/** prctl(2)'s option that makes the caller the parent of its descendants' orphans. */
const PR_SET_CHILD_SUBREAPER = 36;

/**
 * Runs `check` with the pid of a session whose leader ended and was reaped, leaving only a zombie
 * this process holds as a child subreaper, and with a live session beside it; cleans up both.
 */
async function withZombieSession(
  check: (zombieSession: number, liveSession: number) => Promise<void>,
): Promise<void> {
  const libc = Deno.dlopen("libc.so.6", {
    prctl: { parameters: ["i32", "u64", "u64", "u64", "u64"], result: "i32" },
    waitpid: { parameters: ["i32", "pointer", "i32"], result: "i32" },
  });
  const before = new Set(zombieChildren(Deno.pid));
  const ownZombies = () => zombieChildren(Deno.pid).filter((pid) => !before.has(pid));
  // not a group leader, so setsid makes the session in its own pid: each pid is its session's
  const live = new Deno.Command("setsid", { args: ["sleep", "30"], stdin: "null" }).spawn();
  try {
    assert.equal(libc.symbols.prctl(PR_SET_CHILD_SUBREAPER, 1n, 0n, 0n, 0n), 0);
    const leader = new Deno.Command("setsid", {
      args: ["python3", "-c", LEAVES_ZOMBIE],
      stdin: "null",
    }).spawn();
    assert.equal((await leader.status).code, 0);
    assert.ok(ownZombies().length > 0, "the session's ended child was left to this process");
    assert.equal(await sessionGoneWithin(leader.pid, 0), false, "its zombie keeps the group");
    await check(leader.pid, live.pid);
  } finally {
    libc.symbols.prctl(PR_SET_CHILD_SUBREAPER, 0n, 0n, 0n, 0n);
    for (const pid of ownZombies()) libc.symbols.waitpid(pid, null, 0);
    libc.close();
    live.kill("SIGKILL");
    await live.status;
  }
}

Deno.test({
  name:
    "K-PTY-5 a session whose only member left is a zombie nobody has reaped yet has ended (no SIGKILL grace to wait out), though its group still answers; one with a live member has not",
  ignore: Deno.build.os !== "linux",
  async fn() {
    await withZombieSession(async (zombieSession, liveSession) => {
      assert.equal(await sessionEndedWithin(zombieSession, 0), true);
      assert.equal(await sessionEndedWithin(liveSession, 0), false);
    });
  },
});

Deno.test({
  name:
    "K-PTY-5 closing a PTY whose program had ended, with only a zombie left of its session, does not wait out the grace for that zombie (given 10 minutes, it waited all of them)",
  ignore: Deno.build.os !== "linux",
  async fn() {
    await withZombieSession(async (zombieSession) => {
      const ending = { signal: "SIGHUP" as const, graceMs: 600_000 };
      const ended = await within(
        endLeaderlessSession(zombieSession, ending).then(() => true),
        30_000,
      );
      assert.equal(ended, true, "still waiting after 30 s of a 600 s grace");
    });
  },
});
