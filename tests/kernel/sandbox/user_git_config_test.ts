/**
 * What the human's global git config names (its included files, its `core.hooksPath`) is read
 * or run by the human's git in every repository, unconfined: where it lies in a write root it
 * stays read-only, whether or not that root holds a repository (P-SBX-6).
 */
import assert from "node:assert/strict";
import { exec } from "../../_support/exec.ts";
import { hostTest, NEEDS_TIER_B } from "../../_support/host.ts";
import { startKernel } from "../../_support/kernel.ts";
import { createToken, PROJECT_AGENT, writePolicy } from "../../_support/principals.ts";
import type { Rec } from "../../_support/rec.ts";
import { sandbox } from "../../_support/sandbox.ts";
import { textAt } from "../../_support/paths.ts";

hostTest(
  "P-SBX-6 the files the human's ~/.gitconfig includes and the hooks directory it names stay read-only in a project that holds no repository: the agent wrote core.fsmonitor into the included file, which the human's git status in any repository runs",
  NEEDS_TIER_B,
  async () => {
    const box = await sandbox();
    const home = `${box.dir}/home`;
    const proj = `${home}/proj`;
    await Deno.mkdir(`${proj}/hooks`, { recursive: true });
    const shared = "[user]\n\tname = h\n";
    await Deno.writeTextFile(`${proj}/shared.cfg`, shared);
    await Deno.writeTextFile(
      `${home}/.gitconfig`,
      `[include]\n\tpath = ${proj}/shared.cfg\n\tpath = ~/proj/later.cfg\n` +
        `[core]\n\thooksPath = ${proj}/hooks\n`,
    );
    const token = (await createToken(box, "agent:c", "c")).secret;
    const policy = await writePolicy(box, { "agent:c": PROJECT_AGENT });
    const k = await startKernel(["--policy", policy], box);
    try {
      const human = await k.attach("work");
      await exec(human, `cd ${proj}`);
      const agent = await k.attach("work", token);
      // written by perl, which the static layer cannot see into: the sandbox is the wall
      const write = (name: string) =>
        `perl -e 'open F, ">>${name}" or exit 1; print F "[core]\\n\\tfsmonitor = evil\\n"'`;
      const v = (await exec(
        agent,
        `${write("shared.cfg")}; ${write("later.cfg")}; ${write("hooks/pre-commit")}; echo done`,
        { position: "value" },
      )).value as Rec;
      assert.equal((v.out as Rec).v, "done\n", JSON.stringify(v));
      assert.deepEqual(
        [
          textAt(`${proj}/shared.cfg`),
          textAt(`${proj}/later.cfg`),
          textAt(`${proj}/hooks/pre-commit`),
        ],
        [shared, "", null],
      );
      // what the agent may write is still writable
      await exec(agent, `${write("other.cfg")}`);
      assert.ok(textAt(`${proj}/other.cfg`)?.includes("evil"));
    } finally {
      await k.cleanup();
    }
  },
);
