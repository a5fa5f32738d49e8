/**
 * Whether a sandbox's network relay still runs (P-NET-1), as the kernel asks before a run enters
 * its sandbox. An agent's `kill -KILL` of the relay returns before the relay has ended: on a loaded
 * host the next exec found it still running (state S or R), entered the sandbox it no longer
 * served, and the agent's connection to a forwarded port was refused (relay_kill_test.ts failed
 * so under CI's load).
 */
import assert from "node:assert/strict";
import { RELAY_NAME } from "../../../src/kernel/net/inside.ts";
import { relayRuns } from "../../../src/kernel/sandbox/net_relay.ts";
import { hostTest, NEEDS_TIER_B } from "../../_support/host.ts";
import { pollUntil } from "../../_support/wait.ts";

/** The pid of the only child of `parent`, once it has one. */
function childOf(parent: number): Promise<number> {
  return pollUntil(
    () => {
      try {
        const kids = Deno.readTextFileSync(`/proc/${parent}/task/${parent}/children`).trim();
        return Promise.resolve(kids === "" ? 0 : Number(kids.split(" ")[0]));
      } catch {
        return Promise.resolve(0);
      }
    },
    (pid) => pid > 0,
  );
}

/** The `comm` of `pid`, or null once it is gone. */
function commOf(pid: number): string | null {
  try {
    return Deno.readTextFileSync(`/proc/${pid}/comm`).trim();
  } catch {
    return null;
  }
}

hostTest(
  "P-NET-1 a relay that was sent SIGKILL and has not yet ended counts as gone: the next run gets a fresh sandbox, not one whose relay no longer serves",
  // unshare and nsenter into a user namespace of its own, as the sandbox's bubblewrap makes
  NEEDS_TIER_B,
  async () => {
    // A stand-in relay that takes as long to end as its test wants: the init of a PID namespace
    // ends once every process in it is reaped, and one there whose parent (nsenter, outside) is
    // stopped is not.
    const relay = `$0 = "${RELAY_NAME}"; sleep 1000`;
    const unshare = new Deno.Command("unshare", {
      args: ["-U", "-r", "-p", "-f", "perl", "-e", relay],
      stdout: "null",
      stderr: "null",
    }).spawn();
    let nsenter: Deno.ChildProcess | null = null;
    try {
      const pid = await childOf(unshare.pid);
      await pollUntil(() => Promise.resolve(commOf(pid)), (name) => name === RELAY_NAME);
      assert.equal(relayRuns(pid), true, "the running relay");
      nsenter = new Deno.Command("nsenter", {
        args: ["--preserve-credentials", "-U", "-p", "-t", String(pid), "sleep", "1000"],
        stdout: "null",
        stderr: "null",
      }).spawn();
      await childOf(nsenter.pid);
      Deno.kill(nsenter.pid, "SIGSTOP");
      Deno.kill(pid, "SIGKILL");
      // it is still there, not a zombie, until the stopped nsenter reaps its child
      assert.notEqual(commOf(pid), null);
      assert.equal(relayRuns(pid), false, "the relay sent SIGKILL");
    } finally {
      if (nsenter !== null) {
        Deno.kill(nsenter.pid, "SIGKILL");
        Deno.kill(nsenter.pid, "SIGCONT");
        await nsenter.status;
      }
      try {
        unshare.kill("SIGKILL");
      } catch {
        // it has ended
      }
      await unshare.status;
    }
  },
);
