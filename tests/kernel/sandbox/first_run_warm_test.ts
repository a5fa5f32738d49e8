/**
 * The first exec of a sandboxed agent, sent right after its attach, arrives while its session's
 * resident sandbox starts: it waits for that sandbox, and so did the warm shell the attach
 * prepares. The run's bash is spawned first; the next shell after its answer (issue 33: spawned
 * first, the warm shell held the first exec of an autostarted kernel up ~3 ms, ~7 ms loaded).
 */
import assert from "node:assert/strict";
import { exec } from "../../_support/exec.ts";
import { hostTest, NEEDS_TIER_B } from "../../_support/host.ts";
import { startKernelWithAgent } from "../../_support/kernel.ts";
import { AGENT_RIGHTS } from "../../_support/principals.ts";
import { commandLine, isBwrapCommand, liveChildren } from "../../_support/proc.ts";
import type { Rec } from "../../_support/rec.ts";
import { pollUntil } from "../../_support/wait.ts";

/** `pid` and every live process below it. */
function withDescendants(pid: number): number[] {
  const found = [pid];
  for (let i = 0; i < found.length; i++) found.push(...liveChildren(found[i]).map((c) => c.pid));
  return found;
}

/** The warm shells in the kernel's resident sandboxes: bashes started with the driver's `warm`. */
function sandboxedWarmShells(kernel: number): number[] {
  return liveChildren(kernel).filter((c) => isBwrapCommand(c.command))
    .flatMap((c) => withDescendants(c.pid))
    .filter((pid) => commandLine(pid)?.endsWith(" warm"));
}

hostTest(
  "issue 33: a sandboxed agent's first exec, arriving while its sandbox starts, spawns its bash before the session's next warm shell, which comes after its answer",
  NEEDS_TIER_B,
  async () => {
    const { kernel: k, token } = await startKernelWithAgent("agent:c", {
      fs: { read: ["~/proj/**"], write: ["~/proj/**"] },
      ...AGENT_RIGHTS,
    });
    const proj = `${k.box.dir}/home/proj`;
    await Deno.mkdir(proj, { recursive: true });
    try {
      const human = await k.attach("work");
      await exec(human, `cd ${proj}`);
      const agent = await k.attach("work", token);
      const run = (await exec(agent, "echo $$", { position: "value" })).value as Rec;
      assert.equal(run.ok, true);
      const [warm] = await pollUntil(
        () => Promise.resolve(sandboxedWarmShells(k.child.pid)),
        (pids) => pids.length === 1,
      );
      // pids count up (a wrap of pid_max between the two spawns, ms apart, aside)
      assert.ok(warm > (run.pid as number), `warm shell ${warm}, run ${run.pid}`);
    } finally {
      await k.cleanup();
    }
  },
);
