/**
 * The placeholder that holds an absent `.gitmodules` at a write root (P-SBX-6: "an absent one
 * cannot be created") is an empty directory for as long as the agent's sandbox lives, and git
 * reads `.gitmodules` in every fetch and pull: what the human's own git says meanwhile.
 */
import assert from "node:assert/strict";
import { exec } from "../../_support/exec.ts";
import { hostGit } from "../../_support/git.ts";
import { NEEDS_TIER_B } from "../../_support/host.ts";
import { startKernelWithAgent } from "../../_support/kernel.ts";
import { PROJECT_AGENT } from "../../_support/principals.ts";
import type { Rec } from "../../_support/rec.ts";

Deno.test({
  name:
    "P-SBX-6/M-ONB-3 while the agent's sandbox is up, the human's git fetch and git pull in a project without submodules say nothing of .gitmodules (each warned twice \"unable to access '<proj>/.gitmodules': Is a directory\", as the agent's own git does) [ignored: needs a SPEC decision: P-SBX-6 holds an absent .gitmodules at the root so that none can be made; the kernel holds it with an empty directory (an empty file would show in the human's git status as untracked, and be added by git add -A), which git, reading .gitmodules wherever a file system entry is there, warns about; hold it otherwise, leave an absent .gitmodules unheld, or accept the warning?]",
  ignore: true,
  fn: async () => {
    if (NEEDS_TIER_B !== null) return;
    const { kernel: k, token } = await startKernelWithAgent("agent:c", PROJECT_AGENT);
    try {
      const origin = `${k.box.dir}/origin`;
      const proj = `${k.box.dir}/home/proj`;
      await Deno.mkdir(origin);
      await hostGit(origin, "init", "-q", "-b", "main");
      await hostGit(origin, "commit", "-q", "--allow-empty", "-m", "a");
      await hostGit(k.box.dir, "clone", "-q", origin, proj);
      const human = await k.attach("work");
      await exec(human, `cd ${proj}`);
      const agent = await k.attach("work", token);
      const ran = (await exec(agent, "git status --short", { position: "value" })).value as Rec;
      assert.equal(ran.ok, true, JSON.stringify(ran)); // its sandbox is up, placeholders made
      for (const args of [["fetch", "-q"], ["pull", "-q"]]) {
        const out = await new Deno.Command("git", { args, cwd: proj, stderr: "piped" }).output();
        assert.equal(out.code, 0);
        assert.equal(new TextDecoder().decode(out.stderr), "", `git ${args[0]} said something`);
      }
    } finally {
      await k.cleanup();
    }
  },
});

Deno.test({
  name:
    "P-SBX-6/M-ONB-3 while the agent's sandbox is up, the human's git clean -nd on the host lists none of the placeholders (it listed the 18 empty directories; the agent's own git clean -fd, which exited 1 on each, leaves them alone since they are its git's excludes, 45c5a15) [ignored: needs a SPEC decision: P-SBX-6 holds every absent protected name at a write root, the kernel holds them with empty directories on the host (a mount point must exist), and the human's git clean -d removes every empty untracked directory; hold fewer names, or accept it?]",

  ignore: true,
  fn: async () => {
    if (NEEDS_TIER_B !== null) return;
    const { kernel: k, token } = await startKernelWithAgent("agent:c", PROJECT_AGENT);
    try {
      const proj = `${k.box.dir}/home/proj`;
      await Deno.mkdir(proj, { recursive: true });
      await hostGit(proj, "init", "-q");
      await Deno.writeTextFile(`${proj}/a`, "a\n");
      await hostGit(proj, "add", "a");
      await hostGit(proj, "commit", "-q", "-m", "a");
      const human = await k.attach("work");
      await exec(human, `cd ${proj}`);
      const agent = await k.attach("work", token);
      const cleaned = (await exec(agent, "git clean -fd", { position: "value" })).value as Rec;
      assert.equal(cleaned.status, 0, JSON.stringify(cleaned.err)); // the sandbox is up
      const listed = await new Deno.Command("git", { args: ["clean", "-nd"], cwd: proj }).output();
      assert.equal(new TextDecoder().decode(listed.stdout), "");
    } finally {
      await k.cleanup();
    }
  },
});
