/**
 * P-SBX-6 / P-SBX-7: a repository a sandboxed agent makes in its project. P-SBX-6 protects a
 * `.git/config` created during an exec only "from the next exec on" (so `git init` keeps
 * working), and the root's only when its `.git` is a directory: whatever the agent's one exec
 * writes into a new repository's config is what the human's git later reads, unconfined.
 */
import assert from "node:assert/strict";
import { exec } from "../../_support/exec.ts";
import { startKernel, type TestKernel } from "../../_support/kernel.ts";
import { NEEDS_TIER_B } from "../../_support/host.ts";
import { createToken, PROJECT_AGENT, writePolicy } from "../../_support/principals.ts";
import type { Rec } from "../../_support/rec.ts";
import { sandbox } from "../../_support/sandbox.ts";

/**
 * Whether the human's `git status` in the session ran the agent's program after the agent's one
 * exec ran `plant` in its project (the session's cwd): `plant` may use `./fsm`, a program that
 * leaves a mark outside the project, where only an unconfined run can write.
 */
async function humanRanAgentProgram(plant: string): Promise<boolean> {
  const box = await sandbox();
  const proj = `${box.dir}/home/proj`;
  await Deno.mkdir(proj, { recursive: true });
  const marker = `${box.dir}/ran-as-human`;
  let k: TestKernel | undefined;
  try {
    const token = (await createToken(box, "agent:c", "c")).secret;
    k = await startKernel(["--policy", await writePolicy(box, { "agent:c": PROJECT_AGENT })], box);
    const human = await k.attach("work");
    await exec(human, `cd '${proj}'`);
    const agent = await k.attach("work", token);
    // everything in grant: fs_write in the project, git init/config (opaque: allow), a cd
    const src = `printf '#!/bin/sh\\necho ran > "%s"\\n' '${marker}' > fsm && chmod +x fsm\n` +
      `${plant}\necho planted`;
    const planted = await exec(agent, src, { position: "value" });
    assert.equal(String(((planted.value as Rec).out as Rec).v), "planted\n");
    // the human, in the session it shares with the agent, looks at the state of its work
    await exec(human, "git status >/dev/null 2>&1; true");
    try {
      return (await Deno.readTextFile(marker)) === "ran\n";
    } catch {
      return false; // not there: nothing ran as the human
    }
  } finally {
    if (k) {
      await k.stop();
      await k.cleanup();
    } else await box.cleanup();
  }
}

Deno.test({
  name:
    "P-SBX-6/P-SBX-7: an agent's one exec that runs git init in a subdirectory, sets core.fsmonitor there and cd's into it makes the human's next git status in the session run the agent's program unconfined [ignored: needs a SPEC decision: P-SBX-6 lets a .git/config created during an exec be written in that exec, P-SBX-7 shares the cwd; whether the kernel checks such a config before the human's git reads it, keeps an agent's cd into a repository it made its own, or refuses the human's exec]",
  ignore: true,
  fn: async () => {
    if (NEEDS_TIER_B !== null) return;
    const plant = 'git init -q tools && git -C tools config core.fsmonitor "$PWD/fsm" && cd tools';
    assert.equal(await humanRanAgentProgram(plant), false);
  },
});

Deno.test({
  name:
    "P-SBX-6: in a project that is no repository yet, an agent's one exec that runs git init and sets core.fsmonitor at its write root makes the human's git status there run the agent's program unconfined [ignored: needs a SPEC decision: P-SBX-6 protects the root's .git/config only when .git is a directory when the exec starts; whether an absent root .git may be made by an agent (git init in a new project) and how what it writes there is checked]",
  ignore: true,
  fn: async () => {
    if (NEEDS_TIER_B !== null) return;
    assert.equal(
      await humanRanAgentProgram('git init -q && git config core.fsmonitor "$PWD/fsm"'),
      false,
    );
  },
});
