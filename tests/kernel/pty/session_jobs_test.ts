/**
 * K-PTY-5: closing is never a detach. An interactive shell on a PTY puts each job in a process
 * group of its own; a job that ignores the hangup (`nohup`, `trap '' HUP`) or one left behind by a
 * shell that already exited must not outlive `pty.close`.
 */
import assert from "node:assert/strict";
import { pidsMentioning, processLive, sessionMembers } from "../../_support/proc.ts";
import { openPty, send, waitForScreen } from "./_helpers.ts";

/** Types `line` + Enter into `pty` and returns the number the shell printed after `tag=`. */
async function jobPid(pty: Awaited<ReturnType<typeof openPty>>, tag: string, line: string) {
  const echo = line.endsWith("&") ? " " : "; ";
  await send(pty, [`${line}${echo}echo ${tag}=$!`, { key: "Enter" }]);
  const s = await waitForScreen(pty, (s) => s.screen.some((row) => row.startsWith(`${tag}=`)));
  return Number(s.screen.find((row) => row.startsWith(`${tag}=`))!.slice(tag.length + 1));
}

/**
 * Runs `body` with an interactive bash on a PTY (its prompt shown) in a fresh directory, then
 * kills whatever of `leftovers()` a failing run left behind and removes the directory.
 */
async function withShell(
  body: (pty: Awaited<ReturnType<typeof openPty>>) => Promise<void>,
  leftovers: () => number[],
): Promise<void> {
  const dir = await Deno.makeTempDir({ prefix: "shoal-pty-jobs-test-" });
  try {
    const pty = await openPty(dir, "bash", ["--norc", "-i"]);
    await waitForScreen(pty, (s) => s.screen.some((row) => row.startsWith("$")));
    await body(pty);
  } finally {
    reap(leftovers());
    await Deno.remove(dir, { recursive: true });
  }
}

/** Kills whatever of `pids` a failing run left behind. */
function reap(pids: number[]): void {
  for (const pid of pids) {
    try {
      if (processLive(pid)) Deno.kill(pid, "SIGKILL");
    } catch {
      // gone meanwhile
    }
  }
}

Deno.test("pty.close ends the jobs of an interactive shell that ignore the hangup (K-PTY-5)", async () => {
  const pids: number[] = [];
  await withShell(async (pty) => {
    pids.push(await jobPid(pty, "A", "nohup sleep 600 >/dev/null 2>&1 &"));
    pids.push(await jobPid(pty, "B", "(trap '' HUP; exec sleep 601) &"));
    pids.push(await jobPid(pty, "C", "sleep 602 & disown"));
    assert.deepEqual(pids.map(processLive), [true, true, true]);
    await pty.close();
    assert.deepEqual(pids.filter(processLive), [], "no job outlives the close");
    assert.deepEqual(sessionMembers(pty.pid), [], "nothing of the PTY's session is left");
  }, () => pids);
});

Deno.test("pty.close ends the background jobs a shell left when it exited (K-PTY-5, K-PTY-11)", async () => {
  const pids: number[] = [];
  await withShell(async (pty) => {
    pids.push(await jobPid(pty, "A", "sleep 603 &"));
    await send(pty, ["exit", { key: "Enter" }]);
    const exited = await waitForScreen(pty, (s) => !s.alive);
    assert.deepEqual(exited.exit, { status: 0, signal: null });
    assert.deepEqual(pids.map(processLive), [true], "the job outlives its shell until the close");
    await pty.close();
    assert.deepEqual(pids.filter(processLive), [], "no job outlives the close");
    assert.deepEqual(sessionMembers(pty.pid), [], "nothing of the PTY's session is left");
  }, () => pids);
});

Deno.test("pty.close ends a job that left for a session of its own (setsid --wait, its parent a job) and ignores the hangup (K-PTY-5)", async () => {
  const marker = "619.25";
  await withShell(async (pty) => {
    await jobPid(pty, "A", `setsid --wait sh -c "trap '' HUP; t=${marker}; exec sleep \\$t" &`);
    let escaped: number[] = [];
    for (let i = 0; i < 100 && escaped.length === 0; i++) {
      escaped = pidsMentioning(`sleep ${marker}`);
      await new Promise((r) => setTimeout(r, 20));
    }
    assert.equal(escaped.length, 1, "the job runs in a session of its own");
    await pty.close();
    assert.deepEqual(escaped.filter(processLive), [], "it does not outlive the close");
  }, () => pidsMentioning(`sleep ${marker}`));
});

Deno.test({
  name:
    "[needs SPEC decision K-PTY-5: 'nothing keeps running' for an unsandboxed PTY's double-forked daemon] `setsid -f` leaves a process whose parent exited at once: neither the PTY's session nor its descendants reach it, so it outlives pty.close (a child subreaper or a cgroup would be needed to find it)",
  ignore: true,
  fn: async () => {
    const marker = "619.75";
    await withShell(async (pty) => {
      await jobPid(pty, "A", `setsid -f sh -c "t=${marker}; exec sleep \\$t"; sleep 0.2 &`);
      const daemon = pidsMentioning(`sleep ${marker}`);
      assert.equal(daemon.length, 1, "the daemon runs");
      await pty.close();
      assert.deepEqual(daemon.filter(processLive), [], "it does not outlive the close");
    }, () => pidsMentioning(`sleep ${marker}`));
  },
});
