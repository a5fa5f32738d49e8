/**
 * A sandboxed PTY's start gate (P-SBX-6, K-PTY-1) leaves no descriptor behind in the kernel: every
 * PTY an agent opens and closes over a long-lived kernel's life would otherwise hold one for good.
 */
import assert from "node:assert/strict";
import { startKernelWithAgent } from "../../_support/kernel.ts";
import { hostTest, NEEDS_TIER_B } from "../../_support/host.ts";
import { PROJECT_AGENT } from "../../_support/principals.ts";
import { kernelPid } from "../../_support/proc.ts";
import type { Rec } from "../../_support/rec.ts";
import { exec } from "../../_support/exec.ts";
import { pollUntil } from "../../_support/wait.ts";

/** The kernel's descriptors open on something in a start gate's directory (`gate-<pid>-…`). */
function gateFds(pid: number): string[] {
  const held: string[] = [];
  for (const entry of Deno.readDirSync(`/proc/${pid}/fd`)) {
    try {
      const target = Deno.readLinkSync(`/proc/${pid}/fd/${entry.name}`);
      if (/\/gate-[0-9]+-/.test(target)) held.push(target);
    } catch {
      // closed meanwhile
    }
  }
  return held;
}

hostTest(
  "K-PTY-5/P-SBX-6 a closed sandboxed PTY, or one whose program could not start, leaves no descriptor of its start gate open in the kernel (its ready FIFO stayed open, deleted, one per PTY ever opened)",
  NEEDS_TIER_B,
  async () => {
    const { kernel: k, token } = await startKernelWithAgent("agent:c", PROJECT_AGENT);
    try {
      const proj = `${k.box.dir}/home/proj`;
      await Deno.mkdir(proj);
      await exec(await k.attach("work"), `cd ${proj}`);
      const agent = await k.attach("work", token);
      const pid = kernelPid(k.socket);
      for (const args of [["-c", "exit 0"], ["-c", "echo ready; sleep 100"]]) {
        const opened = await agent.request("pty.open", { cmd: "sh", args }) as Rec;
        await pollUntil(
          () => agent.request("pty.read", { pty_id: opened.pty_id }) as Promise<Rec>,
          (r) => r.alive === false || (r.screen as string[]).includes("ready"),
        );
        await agent.request("pty.close", { pty_id: opened.pty_id });
      }
      // a program that cannot start (a NUL in its arguments) leaves its gate unread
      await assert.rejects(agent.request("pty.open", { cmd: "sh", args: ["-c", "a\0b"] }));
      const held = await pollUntil(() => Promise.resolve(gateFds(pid)), (h) => h.length === 0, 3000)
        .catch(() => gateFds(pid));
      assert.deepEqual(held, [], "descriptors of closed PTYs' gates");
    } finally {
      await k.cleanup();
    }
  },
);
