// A run that entered its sandbox through nsenter (no launcher; in a kernel, a run started while
// no launcher spare waits) has nsenter for its top process, which forks the run, passes its end on
// and mirrors its stops. K-BASH-13: a cancel's SIGTERM killed nsenter, which reported that signal
// at once while bash ran its trap. K-TASK-6: stopped with the group, nsenter stopped itself again
// on seeing its child stopped, stayed stopped after the resume, and the run's end was never seen.
import assert from "node:assert/strict";
import { EventBus } from "../../../src/kernel/events/bus.ts";
import { Journal } from "../../../src/kernel/journal/journal.ts";
import { CaptureSink } from "../../../src/kernel/store/capture.ts";
import { Cas } from "../../../src/kernel/store/cas.ts";
import { type Task, TaskRegistry } from "../../../src/kernel/tasks/registry.ts";
import type { BashChild } from "../../../src/kernel/bash/bash_child.ts";
import { HOST_SANDBOX, hostTest, NEEDS_TIER_B } from "../../_support/host.ts";
import { commandLine, groupSleeps } from "../../_support/proc.ts";
import { withResidents } from "../../_support/residents.ts";
import { withTempDir } from "../../_support/temp_dir.ts";
import { delay, waitUntil } from "../../_support/wait.ts";

/** Runs `script` in bash in a launcher-less resident (so through nsenter) as a task; cancels it after `body`. */
async function withEnteredRun(
  script: string,
  body: (child: BashChild, tasks: TaskRegistry, task: Task) => Promise<void>,
): Promise<void> {
  await withTempDir(async (state) => {
    const journal = Journal.open(state);
    const sink = await CaptureSink.open(await Cas.open(state));
    try {
      await withResidents(
        async ({ proj, residents, sandboxing }) => {
          const resident = await residents.get("s", sandboxing());
          const dir = resident.pool.acquire();
          const child = resident.spawn(
            {
              cwd: proj,
              env: new Map([["PATH", "/usr/bin:/bin"]]),
              vars: new Map(),
              funcs: new Map(),
              aliases: new Map(),
            },
            ["/bin/bash", "--norc", "-c", script],
            dir,
          );
          resident.hold(child);
          child.stdout.cancel().catch(() => {});
          child.stderr.cancel().catch(() => {});
          assert.match(commandLine(child.pid) ?? "", /nsenter/);
          const tasks = new TaskRegistry(new EventBus(journal));
          const task = tasks.create("s", "p", script, { stdout: sink, stderr: sink });
          tasks.spawned(task, child.pid, child.entered === true);
          try {
            await body(child, tasks, task);
          } finally {
            if (!task.terminal) tasks.cancel(task);
            await child.status;
            tasks.finish(task, "cancelled", null, null);
            resident.pool.release(dir);
          }
        },
        HOST_SANDBOX,
        false,
      );
    } finally {
      await sink.abort();
      journal.close();
    }
  });
}

hostTest(
  "K-BASH-13/K-TASK-5 a cancelled run that entered its sandbox through nsenter ends as bash does, by its TERM trap's exit 7: the SIGTERM killed nsenter, which reported that signal at once",
  NEEDS_TIER_B,
  () =>
    withEnteredRun("trap 'exit 7' TERM; sleep 30 & wait", async (child, tasks, task) => {
      // its trap is set once its sleep runs: a fixed 300 ms is too short for a run slowed before it
      assert.ok(
        await waitUntil(() => groupSleeps(child.pid), 10000),
        "the run never got to its sleep",
      );
      tasks.cancel(task);
      const status = await child.status;
      assert.deepEqual([status.code, status.signal], [7, null]);
    }),
);

hostTest(
  "K-TASK-6 a run that entered its sandbox through nsenter ends after task.suspend and task.resume",
  NEEDS_TIER_B,
  () =>
    withEnteredRun("sleep 1; exit 5", async (child, tasks, task) => {
      // Each signal once the processes took the one before.
      await delay(300);
      tasks.pause(task, true);
      await delay(300);
      tasks.pause(task, false);
      let timer: ReturnType<typeof setTimeout> | undefined;
      const ended = await Promise.race([
        child.status.then((status) => status.code),
        new Promise<null>((resolve) => timer = setTimeout(() => resolve(null), 15000)),
      ]);
      clearTimeout(timer);
      assert.equal(ended, 5, "the run ended by itself after the resume");
    }),
);
