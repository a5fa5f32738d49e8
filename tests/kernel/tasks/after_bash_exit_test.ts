import assert from "node:assert/strict";
import { startKernelWithAgent, withKernel } from "../../_support/kernel.ts";
import { exec } from "../../_support/exec.ts";
import { hostTest, NEEDS_TIER_B } from "../../_support/host.ts";
import { dirAgent } from "../../_support/principals.ts";
import { groupMembers, parentPid, processLive, psField } from "../../_support/proc.ts";
import type { Rec } from "../../_support/rec.ts";
import { rpcError } from "../../_support/rejection.ts";
import { EVENT_WAIT_MS, waitUntil } from "../../_support/wait.ts";

withKernel(
  "K-TASK-1/K-BASH-4 a cancel that arrives after bash exited by itself, while a background job still holds its stdout (K-BASH-3), leaves the task completed and its state changes applied",
  async (conn) => {
    const groups: number[] = [];
    try {
      // The window is the pipe linger after bash's exit (at most 500 ms): tried until a cancel
      // lands in it, which the reply says (cancel_requested) once bash is known to be gone.
      let hit: { task: string; n: number } | null = null;
      for (let n = 1; n <= 10 && hit === null; n++) {
        const { task } = await exec(conn, `export LATE=${n}; sleep 30 &`, { async: true });
        const pid = (await conn.request("task.get", { task }) as Rec).pid as number;
        groups.push(pid);
        assert.ok(await waitUntil(() => !processLive(pid), 10000), "bash did not exit");
        const cancel = await conn.request("task.cancel", { task }) as Rec;
        if (cancel.cancel_requested === true) hit = { task: task as string, n };
        await conn.request("task.await", { task, timeout_ms: 20000 });
      }
      assert.ok(hit !== null, "no cancel reached a task between bash's exit and its end");
      const done = await conn.request("task.await", { task: hit.task, timeout_ms: 20000 }) as Rec;
      assert.equal(done.state, "completed");
      assert.equal(done.error, null);
      assert.equal(((done.result as Rec).value as Rec).ok, true);
      // bash ended normally, so its export persists (K-BASH-4) although its job was cancelled
      const late = await exec(conn, "echo $LATE");
      assert.deepEqual((late.value as Rec).out, { $: "int", v: hit.n });
    } finally {
      for (const pgid of groups) {
        try {
          Deno.kill(-pgid, "SIGKILL");
        } catch {
          // gone
        }
      }
    }
  },
);

withKernel(
  "K-TASK-6 a task that ends while suspended (bash exited by itself, its background job held stdout) leaves no process stopped: resume is refused once it is terminal, so its job is continued",
  async (conn) => {
    const groups: number[] = [];
    try {
      let hit: { task: string; pid: number } | null = null;
      for (let n = 1; n <= 10 && hit === null; n++) {
        const { task } = await exec(conn, "sleep 30 &", { async: true });
        const pid = (await conn.request("task.get", { task }) as Rec).pid as number;
        groups.push(pid);
        assert.ok(await waitUntil(() => !processLive(pid), 10000), "bash did not exit");
        const paused = await conn.request("task.suspend", { task }).catch(() => null) as Rec | null;
        if (paused?.state === "suspended") hit = { task: task as string, pid };
        await conn.request("task.await", { task, timeout_ms: 20000 });
      }
      assert.ok(hit !== null, "no suspend reached a task between bash's exit and its end");
      const done = await conn.request("task.get", { task: hit.task }) as Rec;
      assert.equal(done.state, "completed");
      const resume = await rpcError(conn.request("task.resume", { task: hit.task }));
      assert.equal(resume.code, -32020);
      const job = groupMembers(hit.pid);
      assert.equal(job.length, 1, "the background sleep is still in the task's group");
      assert.ok(
        await waitUntil(() => psField(job[0], "stat")?.[0] !== "T", EVENT_WAIT_MS),
        "the task's background job stays stopped with no task left to resume it",
      );
    } finally {
      for (const pgid of groups) {
        try {
          Deno.kill(-pgid, "SIGKILL");
        } catch {
          // gone
        }
      }
    }
  },
);

hostTest(
  "K-TASK-1/K-BASH-4 a cancel that arrives after bash exited by itself but before the kernel learnt of it (bash a zombie: its sandbox's launcher, stopped, has not reaped it yet) leaves the task completed and its export applied, not cancelled with its state changes dropped",
  NEEDS_TIER_B,
  async () => {
    const { kernel: k, token } = await startKernelWithAgent("agent:r", (box) => dirAgent(box.dir));
    const stopped: number[] = [];
    try {
      const conn = await k.attach("default", token);
      await exec(conn, `cd ${k.box.dir}`);
      // bash runs on until the test lets it (once its launcher is stopped), however slow the host
      const gate = `${k.box.dir}/go`;
      const src = `until [ -e ${gate} ]; do sleep 0.05; done; export LATE=1`;
      const { task } = await exec(conn, src, { async: true });
      const pid = (await conn.request("task.get", { task }) as Rec).pid as number;
      // bash's parent is the sandbox's launcher, which reaps it and reports its exit; never the
      // kernel itself, which must go on serving
      const launcher = parentPid(pid);
      assert.notEqual(launcher, k.child.pid, "bash was not started by a launcher");
      Deno.kill(launcher, "SIGSTOP");
      stopped.push(launcher);
      Deno.writeTextFileSync(gate, "");
      assert.ok(await waitUntil(() => psField(pid, "stat")?.[0] === "Z", 10000), "no exit");
      // bash has ended; the kernel does not know it yet
      assert.equal((await conn.request("task.get", { task }) as Rec).state, "running");
      await conn.request("task.cancel", { task });
      Deno.kill(launcher, "SIGCONT");
      stopped.pop();
      const done = await conn.request("task.await", { task, timeout_ms: 20000 }) as Rec;
      const value = (done.result as Rec).value as Rec;
      assert.deepEqual([value.status, value.signal], [0, null], "bash exited by itself");
      assert.equal(done.state, "completed");
      const late = await exec(conn, "echo ${LATE:-lost}");
      assert.deepEqual((late.value as Rec).out, { $: "int", v: 1 });
    } finally {
      for (const pid of stopped) Deno.kill(pid, "SIGCONT");
      await k.cleanup();
    }
  },
);
