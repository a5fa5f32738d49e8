// K-BASH-13/K-TASK-5 in a sandbox: a run that enters its sandbox through nsenter (no launcher
// spare was waiting, as for an agent's first run) has nsenter for its top process, which forks
// the run and passes its exit on. A cancel's SIGTERM killed nsenter at once: the task ended
// ~0.5 s later reporting signal SIGTERM, while bash ran its TERM trap (exit 7) or, ignoring
// TERM, went on until the SIGKILL.
import assert from "node:assert/strict";
import { startKernelWithAgent } from "../../_support/kernel.ts";
import { exec } from "../../_support/exec.ts";
import { commandLine, pidsMentioning } from "../../_support/proc.ts";
import { dirAgent } from "../../_support/principals.ts";
import type { Rec } from "../../_support/rec.ts";
import { waitUntil } from "../../_support/wait.ts";

Deno.test("K-BASH-13/K-TASK-5 a cancelled sandboxed run reports bash's own end: its TERM trap's exit status, not the SIGTERM of the nsenter it entered through, for each of three agents' first runs", async () => {
  const seen: string[] = [];
  for (let round = 0; round < 3; round++) {
    const { kernel: k, token } = await startKernelWithAgent("agent:c", (box) => dirAgent(box.dir));
    const marker = `30${round}.${Date.now() % 100000}`;
    try {
      await exec(await k.attach("work"), `cd ${k.box.dir}`);
      const agent = await k.attach("work", token);
      const { task } = await exec(
        agent,
        `trap 'exit 7' TERM; sleep ${marker} & wait`,
        { async: true },
      ) as Rec;
      assert.ok(await waitUntil(() => pidsMentioning(marker).length > 0, 20000), "it started");
      const record = await agent.request("task.get", { task }) as Rec;
      const top = commandLine(record.pid as number)?.split(" ")[0] ?? "gone";
      await agent.request("task.cancel", { task });
      const done = await agent.request("task.await", { task, timeout_ms: 20000 }) as Rec;
      const value = (done.result as Rec).value as Rec;
      seen.push(`${top}: ${done.state} status ${value.status} signal ${value.signal}`);
      assert.ok(await waitUntil(() => pidsMentioning(marker).length === 0, 10000), "ended");
    } finally {
      for (const pid of pidsMentioning(marker)) {
        try {
          Deno.kill(pid, "SIGKILL");
        } catch {
          // gone
        }
      }
      await k.cleanup();
    }
  }
  assert.deepEqual(
    seen.map((s) => s.replace(/^[^:]*: /, "")),
    [
      "cancelled status 7 signal null",
      "cancelled status 7 signal null",
      "cancelled status 7 signal null",
    ],
    seen.join("; "),
  );
});
