/**
 * A test's cleanup stops its own processes, never another test's sandbox. A sandboxed agent that
 * sees /tmp (tests' agents once did) has its view protect every `.git` and `home/.gitconfig`
 * below it, other tests' directories among them, and bwrap's command line names each: a cleanup
 * that stopped every process mentioning its directory SIGTERMed that sandbox, and the run going
 * on in it ended killed (`-32002 command killed by SIGKILL`) in a test that had done nothing
 * wrong.
 */
import assert from "node:assert/strict";
import { exec } from "../../_support/exec.ts";
import { startKernelWithAgent } from "../../_support/kernel.ts";
import { hostTest, NEEDS_TIER_B } from "../../_support/host.ts";
import { dirAgent } from "../../_support/principals.ts";
import { isBwrapCommand, liveChildren, processLive } from "../../_support/proc.ts";
import type { Rec } from "../../_support/rec.ts";
import { sandbox, stopProcessesMentioning } from "../../_support/sandbox.ts";
import { waitUntil } from "../../_support/wait.ts";

hostTest(
  "P-SBX-4 a test's cleanup leaves alone another kernel's sandbox whose bwrap names that test's directory (a protected .git there): its run goes on",
  NEEDS_TIER_B,
  async () => {
    // our directory below a parent the other kernel's agent sees (not all of /tmp, where other
    // tests' are), besides its own
    const parent = await Deno.realPath(await Deno.makeTempDir({ prefix: "shoal-test-" }));
    const ours = await sandbox(parent);
    const { kernel: k, token } = await startKernelWithAgent(
      "agent:t",
      (box) => dirAgent(box.dir, parent),
    );
    try {
      // a repository in our directory: the other kernel's agent, which sees it, protects it
      await Deno.mkdir(`${ours.dir}/repo/.git`, { recursive: true });
      await Deno.writeTextFile(`${ours.dir}/repo/.git/config`, "");
      const agent = await k.attach("default", token);
      const { task } = await exec(agent, "sleep 60", { async: true });
      // its sandbox, whose bwrap names our directory (the .git there is read-only in it)
      const naming = () =>
        liveChildren(k.child.pid).filter((c) =>
          isBwrapCommand(c.command) && c.command.includes(ours.dir)
        ).map((c) => c.pid);
      assert.ok(await waitUntil(() => naming().length > 0, 10_000), "no sandbox names it");
      const [bwrap] = naming();
      // what our cleanup does before it removes our directory: removing the .git/config that
      // sandbox binds ends it (the kernel's guard finds the protection gone, P-SBX-6), whoever
      // removes it, so only the stopping is seen here
      await stopProcessesMentioning(ours.dir);
      assert.ok(processLive(bwrap), "our cleanup ended the other kernel's sandbox");
      const got = await agent.request("task.get", { task }) as Rec;
      assert.equal(got.state, "running", JSON.stringify(got));
      await agent.request("task.cancel", { task });
    } finally {
      await k.cleanup(); // first: its sandboxes hold placeholders in our repository
      await ours.cleanup();
      await Deno.remove(parent, { recursive: true });
    }
  },
);
