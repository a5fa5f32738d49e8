// K-TASK-6 for a run that entered its sandbox through nsenter (no launcher; in a kernel, a run
// started while no launcher spare waits): nsenter forks the run and mirrors its stops. Stopped
// with the group, it stopped itself again on seeing its child stopped, stayed stopped after the
// resume, and the run's end was never seen: the task ran on until a cancel's SIGKILL.
import assert from "node:assert/strict";
import { EventBus } from "../../../src/kernel/events/bus.ts";
import { Journal } from "../../../src/kernel/journal/journal.ts";
import { CaptureSink } from "../../../src/kernel/store/capture.ts";
import { Cas } from "../../../src/kernel/store/cas.ts";
import { TaskRegistry } from "../../../src/kernel/tasks/registry.ts";
import { HOST_SANDBOX, hostTest, NEEDS_TIER_B } from "../../_support/host.ts";
import { commandLine } from "../../_support/proc.ts";
import { withResidents } from "../../_support/residents.ts";
import { withTempDir } from "../../_support/temp_dir.ts";
import { delay } from "../../_support/wait.ts";

hostTest(
  "K-TASK-6 a run that entered its sandbox through nsenter ends after task.suspend and task.resume",
  NEEDS_TIER_B,
  () =>
    withTempDir(async (state) => {
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
              ["/bin/bash", "--norc", "-c", "sleep 1; echo done"],
              dir,
            );
            resident.hold(child);
            const output = new Response(child.stdout).text();
            child.stderr.cancel().catch(() => {});
            assert.match(commandLine(child.pid) ?? "", /nsenter/);
            const tasks = new TaskRegistry(new EventBus(journal));
            const task = tasks.create("s", "p", "sleep 1; echo done", {
              stdout: sink,
              stderr: sink,
            });
            tasks.spawned(task, child.pid, child.entered === true);
            // Each signal once the processes took the one before.
            await delay(300);
            tasks.pause(task, true);
            await delay(300);
            tasks.pause(task, false);
            let timer: ReturnType<typeof setTimeout> | undefined;
            const ended = await Promise.race([
              child.status.then(() => true),
              new Promise<false>((resolve) => timer = setTimeout(() => resolve(false), 15000)),
            ]);
            clearTimeout(timer);
            if (!ended) {
              tasks.cancel(task);
              await child.status;
            }
            assert.equal(ended, true, "the run ended after the resume");
            assert.equal(await output, "done\n");
            tasks.finish(task, "completed", null, null);
            resident.pool.release(dir);
          },
          HOST_SANDBOX,
          false,
        );
      } finally {
        await sink.abort();
        journal.close();
      }
    }),
);
