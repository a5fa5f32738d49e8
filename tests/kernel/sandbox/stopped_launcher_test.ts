/**
 * A resident's launcher is the parent of every run it starts and the one that reports their end
 * (`launcher.ts`); it runs as the agent's uid, so an agent's process can stop it. The kernel's
 * shutdown must not wait on it for good (P-SBX-4: kernel shutdown reaches every process inside).
 */
import assert from "node:assert/strict";
import { exec } from "../../_support/exec.ts";
import { startKernelWithAgent } from "../../_support/kernel.ts";
import { hostTest, NEEDS_TIER_B } from "../../_support/host.ts";
import { PROJECT_AGENT } from "../../_support/principals.ts";
import { liveChildren, processLive } from "../../_support/proc.ts";
import { delay } from "../../_support/wait.ts";

/** Attaches to the launcher (found by its command line) with ptrace(2) and exits: it stays stopped. */
const STOP_THE_LAUNCHER = String.raw`
import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
for pid in filter(str.isdigit, os.listdir("/proc")):
    try:
        if open(f"/proc/{pid}/cmdline", "rb").read().startswith(b"/dev/shoal/launcher"):
            print("attach", libc.ptrace(16, int(pid), 0, 0))
    except OSError:
        pass
`;

/** The live processes below `pid` whose command line starts with `prefix`. */
function below(pid: number, prefix: string): number[] {
  const found: number[] = [];
  const queue = [pid];
  while (queue.length > 0) {
    for (const child of liveChildren(queue.shift()!)) {
      if (child.command.startsWith(prefix)) found.push(child.pid);
      queue.push(child.pid);
    }
  }
  return found;
}

/** Longer than any shutdown takes here, even of a kernel whose runs need the kill grace. */
const HUNG_MS = 30_000;

hostTest(
  "P-SBX-4 a kernel whose resident launcher an agent's process left stopped (ptrace attach, then exit) still shuts down on SIGTERM, and nothing of the sandbox is left: its warm shell's end was awaited from the stopped launcher for good",
  NEEDS_TIER_B,
  async () => {
    const { kernel: k, token } = await startKernelWithAgent("agent:c", PROJECT_AGENT);
    let hung = false;
    try {
      const proj = `${k.box.dir}/home/proj`;
      await Deno.mkdir(proj);
      await Deno.writeTextFile(`${proj}/stop.py`, STOP_THE_LAUNCHER);
      await exec(await k.attach("work"), `cd ${proj}`);
      const agent = await k.attach("work", token);
      // the run's own end may be the stopped launcher's to report: it goes on as a task
      await exec(agent, "python3 stop.py > attached", { timeout_ms: 5000 });
      assert.match(await Deno.readTextFile(`${proj}/attached`), /^attach 0$/m);
      const launchers = below(k.child.pid, "/dev/shoal/launcher");
      assert.ok(launchers.length > 0, "the resident's launcher runs");
      const stopped = await Promise.race([k.stop(), delay(HUNG_MS).then(() => "hung" as const)]);
      hung = stopped === "hung";
      assert.ok(!hung, "the kernel did not exit on SIGTERM");
      assert.deepEqual(launchers.filter(processLive), [], "launchers left");
    } finally {
      if (hung) k.child.kill("SIGKILL");
      await k.cleanup();
    }
  },
);
