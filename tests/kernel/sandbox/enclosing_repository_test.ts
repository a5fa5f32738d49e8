/**
 * A write root inside a git work tree whose `.git` lies above it (SPEC §7.8 P-SBX-6): the project
 * an agent is onboarded on (M-ONB-1 `--project DIR`) is often one package of a monorepo. What the
 * enclosing repository's git runs or reads as configuration, when it lies in the write root, stays
 * read-only, as it does for a repository inside the root.
 */
import assert from "node:assert/strict";
import { exec } from "../../_support/exec.ts";
import { hostGit } from "../../_support/git.ts";
import { hostTest, NEEDS_TIER_B } from "../../_support/host.ts";
import { startKernel, startKernelWithAgent } from "../../_support/kernel.ts";
import { AGENT_RIGHTS, kernelCli } from "../../_support/principals.ts";
import { sandbox } from "../../_support/sandbox.ts";
import type { Rec } from "../../_support/rec.ts";
import { textAt } from "../../_support/paths.ts";

/** An agent whose project is `~/mono/frontend`, one package of the repository `~/mono`. */
const PACKAGE_AGENT = {
  fs: {
    read: ["~/mono/frontend/**"],
    write: ["~/mono/frontend/**"],
    delete: ["~/mono/frontend/**"],
  },
  ...AGENT_RIGHTS,
};

hostTest(
  "P-SBX-6 a package of a monorepo (husky's 'project not in the git root': core.hooksPath frontend/.husky/_ in the repository above the write root) keeps its hooks and the config it includes from there read-only: the agent wrote frontend/.husky/pre-commit and the human's git commit at the top ran it",
  NEEDS_TIER_B,
  async () => {
    const { kernel: k, token } = await startKernelWithAgent("agent:c", PACKAGE_AGENT);
    const marker = `${Deno.makeTempDirSync()}/ran-as-human`;
    try {
      const mono = `${k.box.dir}/home/mono`;
      const front = `${mono}/frontend`;
      await Deno.mkdir(`${front}/.husky/_`, { recursive: true });
      await hostGit(mono, "init", "-q");
      // what `cd .. && husky frontend/.husky` leaves (husky's docs for a package.json below the root)
      await hostGit(mono, "config", "core.hooksPath", "frontend/.husky/_");
      await Deno.writeTextFile(
        `${front}/.husky/_/h`,
        '#!/bin/sh\nsh "frontend/.husky/$(basename "$0")"\n',
      );
      await Deno.chmod(`${front}/.husky/_/h`, 0o755);
      for (const hook of ["pre-commit", "post-commit"]) {
        await Deno.symlink("h", `${front}/.husky/_/${hook}`);
      }
      await Deno.writeTextFile(`${front}/.husky/pre-commit`, "echo lint\n");
      // a config the repository includes from the package (relative to .git/)
      await hostGit(mono, "config", "include.path", "../frontend/team.gitconfig");
      await Deno.writeTextFile(`${front}/team.gitconfig`, "[pull]\n\trebase = true\n");
      await Deno.writeTextFile(`${front}/app.js`, "1\n");
      await hostGit(mono, "add", ".");
      await hostGit(mono, "commit", "-q", "-m", "init");
      const human = await k.attach("work");
      await exec(human, `cd ${front}`);
      const agent = await k.attach("work", token);
      await Deno.writeTextFile(
        `${front}/attack.sh`,
        [
          `(echo 'touch ${marker}' > .husky/pre-commit) 2>/dev/null`,
          `(echo 'touch ${marker}' > .husky/post-commit) 2>/dev/null`,
          `(printf '#!/bin/sh\\ntouch ${marker}\\n' > .husky/_/h) 2>/dev/null`,
          `(printf '[core]\\n\\tfsmonitor = touch ${marker}\\n' >> team.gitconfig) 2>/dev/null`,
          "echo done",
        ].join("\n"),
      );
      const outcome = (await exec(agent, "sh attack.sh", { position: "value" })).value as Rec;
      assert.match(String((outcome.out as Rec)?.v), /done/);
      await hostGit(mono, "commit", "-q", "--allow-empty", "-m", "x");
      assert.equal(textAt(marker), null, "the agent's hook script ran in the human's git commit");
      assert.equal(textAt(`${front}/.husky/pre-commit`), "echo lint\n");
      assert.equal(textAt(`${front}/team.gitconfig`), "[pull]\n\trebase = true\n");
    } finally {
      await k.cleanup();
      Deno.removeSync(marker.slice(0, marker.lastIndexOf("/")), { recursive: true });
    }
  },
);

Deno.test({
  name:
    "M-ONB-3 in a project that is one package of a monorepo (--project ~/mono/frontend, the repository's .git in ~/mono), the agent's git status and git diff work as in a terminal [ignored: defect found by the probe round; needs a SPEC decision: the project profile grants DIR/** only, so both are refused (-32010 'lacks fs.read ~/mono'), and granting what they need (reading ~/mono/.git, writing its index, objects and refs to commit) shows the agent every package's history and lets it commit any of their files: which grants should a package project get, as M-ONB-3 gave a linked worktree's?]",
  ignore: true,
  fn: async () => {
    if (NEEDS_TIER_B !== null) return;
    const box = await sandbox();
    const kernel = await startKernel([], box);
    try {
      const mono = `${box.dir}/home/mono`;
      const front = `${mono}/frontend`;
      await Deno.mkdir(front, { recursive: true });
      await hostGit(mono, "init", "-q");
      await Deno.writeTextFile(`${front}/app.js`, "1\n");
      await hostGit(mono, "add", ".");
      await hostGit(mono, "commit", "-q", "-m", "init");
      const r = await kernelCli(box, ["onboard", "agent:claude-code", "--project", front]);
      assert.equal(r.code, 0, r.stderr);
      const agent = await kernel.connect();
      await agent.request("session.attach", { token: JSON.parse(r.stdout).token, cwd: front });
      await Deno.writeTextFile(`${front}/app.js`, "2\n");
      for (const src of ["git status --short", "git diff --stat"]) {
        const value = (await exec(agent, src, { position: "value" })).value as Rec;
        assert.equal(value.status, 0, `${src}: ${JSON.stringify(value.err)}`);
      }
    } finally {
      await kernel.cleanup();
    }
  },
});
