/**
 * A PTY whose program exited stays registered until `pty.close` (K-PTY-11), for as long as nobody
 * closes it; by then its pid, and with it the process group number close signals, may belong to
 * another program: pids wrap (pid_max is 32768 on many hosts, and every kernel exec takes one).
 */
import assert from "node:assert/strict";
import { openPty, processExists, waitForScreen } from "./_helpers.ts";
import { psField } from "../../_support/proc.ts";
import { withTempDir } from "../../_support/temp_dir.ts";

const LAST_PID = "/proc/sys/kernel/ns_last_pid";

/** Whether this process may choose the next pid (Linux, CAP_SYS_ADMIN in its pid namespace). */
function canChoosePids(): boolean {
  try {
    Deno.writeTextFileSync(LAST_PID, Deno.readTextFileSync(LAST_PID).trim());
    return true;
  } catch {
    return false;
  }
}

/**
 * Starts `setsid sleep 1000` (a session and group leader, as each kernel exec is) under `pid`, by
 * setting the pid namespace's last pid just below it; other processes of the host may take it
 * first, so it tries a few times; null when it never got it.
 */
async function leaderUnder(pid: number): Promise<Deno.ChildProcess | null> {
  for (let i = 0; i < 50; i++) {
    Deno.writeTextFileSync(LAST_PID, String(pid - 1));
    const child = new Deno.Command("setsid", {
      args: ["sleep", "1000"],
      stdin: "null",
      stdout: "null",
      stderr: "null",
    }).spawn();
    if (child.pid === pid) return child;
    child.kill("SIGKILL");
    await child.status;
  }
  return null;
}

Deno.test({
  name:
    "K-PTY-5 closing a PTY whose program exited long ago leaves alone the process group that took its pid since (it hung up an unrelated program)",
  ignore: Deno.build.os !== "linux" || !canChoosePids(),
  fn: async () => {
    await withTempDir(async (dir) => {
      const pty = await openPty(dir, "true", []);
      let other: Deno.ChildProcess | null = null;
      try {
        await waitForScreen(pty, (s) => !s.alive);
        assert.equal(processExists(pty.pid), false, "the program is reaped");
        other = await leaderUnder(pty.pid);
        assert.ok(other !== null, `pid ${pty.pid} could not be taken again`);
        assert.deepEqual(await pty.close(), { status: 0, signal: null });
        const state = psField(other.pid, "stat")?.[0] ?? "gone";
        assert.ok(
          state !== "Z" && state !== "gone",
          `the group that took the pid was ended (${state})`,
        );
      } finally {
        await pty.close();
        if (other !== null) {
          try {
            other.kill("SIGKILL");
          } catch {
            // already ended
          }
          await other.status;
        }
      }
    });
  },
});
