/**
 * Files of a repository's git directory, besides hooks and config, that git runs as commands when
 * the human resumes an operation (SPEC §7.8 P-SBX-6): an interactive rebase's todo list holds
 * `exec` lines, which `git rebase --continue` runs in the shell.
 */
import assert from "node:assert/strict";
import { exec } from "../../_support/exec.ts";
import { hostGit } from "../../_support/git.ts";
import { NEEDS_TIER_B } from "../../_support/host.ts";
import { startKernelWithAgent } from "../../_support/kernel.ts";
import { PROJECT_AGENT } from "../../_support/principals.ts";
import type { Rec } from "../../_support/rec.ts";

/** Runs `sh -c script` as the local human in `cwd`; returns its exit code. */
async function hostSh(cwd: string, script: string): Promise<number> {
  const env = { GIT_EDITOR: "true", GIT_AUTHOR_NAME: "a", GIT_AUTHOR_EMAIL: "a@x" };
  const committer = { GIT_COMMITTER_NAME: "a", GIT_COMMITTER_EMAIL: "a@x" };
  const out = await new Deno.Command("sh", {
    args: ["-c", script],
    cwd,
    env: { ...env, ...committer },
    stdout: "null",
    stderr: "null",
  }).output();
  return out.code;
}

Deno.test({
  name:
    "P-SBX-6 a rebase the human's git stopped on a conflict (the agent asked to resolve it) runs none of the agent's code at the human's git rebase --continue: the agent appended `exec PROGRAM` to .git/rebase-merge/git-rebase-todo, and git ran it unconfined [ignored: defect found by the probe round; needs a SPEC decision: P-SBX-6 keeps .git/hooks and .git/config read-only, but git also runs the exec lines of a stopped rebase's todo list (.git/rebase-merge/git-rebase-todo, and `git rebase -x`'s), which the agent's own rebases must write; protect the list of a rebase stopped before the exec started, refuse to run while one is stopped, or leave it to the human?]",
  ignore: true,
  fn: async () => {
    if (NEEDS_TIER_B !== null) return;
    const { kernel: k, token } = await startKernelWithAgent("agent:c", PROJECT_AGENT);
    const marker = `${Deno.makeTempDirSync()}/ran-as-human`;
    try {
      const proj = `${k.box.dir}/home/proj`;
      await Deno.mkdir(proj, { recursive: true });
      await hostGit(proj, "init", "-q", "-b", "main");
      await Deno.writeTextFile(`${proj}/f`, "1\n");
      await hostGit(proj, "add", "f");
      await hostGit(proj, "commit", "-q", "-m", "one");
      await hostGit(proj, "checkout", "-q", "-b", "topic");
      await Deno.writeTextFile(`${proj}/f`, "2\n");
      await hostGit(proj, "commit", "-q", "-am", "two");
      await Deno.writeTextFile(`${proj}/g`, "t\n");
      await hostGit(proj, "add", "g");
      await hostGit(proj, "commit", "-q", "-m", "three");
      await hostGit(proj, "checkout", "-q", "main");
      await Deno.writeTextFile(`${proj}/f`, "3\n");
      await hostGit(proj, "commit", "-q", "-am", "main three");
      await hostGit(proj, "checkout", "-q", "topic");
      assert.notEqual(await hostSh(proj, "git rebase main"), 0, "the rebase stops on f");
      const human = await k.attach("work");
      await exec(human, `cd ${proj}`);
      const agent = await k.attach("work", token);
      await Deno.writeTextFile(
        `${proj}/resolve.sh`,
        [
          "echo 23 > f",
          `(echo 'exec touch ${marker}' >> .git/rebase-merge/git-rebase-todo) 2>/dev/null`,
          "echo resolved",
        ].join("\n"),
      );
      const outcome = (await exec(agent, "sh resolve.sh", { position: "value" })).value as Rec;
      assert.match(String((outcome.out as Rec)?.v), /resolved/);
      await hostSh(proj, "rm resolve.sh; git add f && git rebase --continue");
      let ran = true;
      try {
        Deno.statSync(marker);
      } catch {
        ran = false;
      }
      assert.equal(ran, false, "the agent's exec line ran in the human's git rebase --continue");
    } finally {
      await k.cleanup();
      Deno.removeSync(marker.slice(0, marker.lastIndexOf("/")), { recursive: true });
    }
  },
});
