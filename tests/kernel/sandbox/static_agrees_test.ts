/**
 * "The static layer agrees" (SPEC §7.8 P-SBX-6; M-ONB-3: what needs more gets a clear answer):
 * what the sandbox keeps read-only beyond the protected names (the hooks directory a repository's
 * core.hooksPath names, a file its config includes, the target of a protected name's link, the
 * target of a link from HOME) needs approval before a write, as a protected name does, instead of
 * running and failing with "Read-only file system".
 */
import assert from "node:assert/strict";
import { RpcError } from "../../../src/protocol/errors.ts";
import { exec } from "../../_support/exec.ts";
import { hostGit } from "../../_support/git.ts";
import { hostTest, NEEDS_TIER_B } from "../../_support/host.ts";
import { startKernelWithAgent } from "../../_support/kernel.ts";
import { PROJECT_AGENT } from "../../_support/principals.ts";
import type { Rec } from "../../_support/rec.ts";

hostTest(
  "P-SBX-6/M-ONB-3 a write to a hooks directory core.hooksPath names, a config the repository includes, the target of .envrc's link or of ~/.bashrc's asks approval naming it (it ran and failed: 'Read-only file system'); approved, it is written; the rest of the project is not held up",
  NEEDS_TIER_B,
  async () => {
    const { kernel: k, token } = await startKernelWithAgent("agent:c", PROJECT_AGENT);
    try {
      const home = `${k.box.dir}/home`;
      const proj = `${home}/proj`;
      await Deno.mkdir(`${proj}/.husky`, { recursive: true });
      await hostGit(proj, "init", "-q");
      await hostGit(proj, "config", "core.hooksPath", ".husky");
      await hostGit(proj, "config", "include.path", "../team.gitconfig");
      await Deno.writeTextFile(`${proj}/team.gitconfig`, "");
      await Deno.writeTextFile(`${proj}/env.sh`, "");
      await Deno.symlink("env.sh", `${proj}/.envrc`);
      await Deno.writeTextFile(`${proj}/bashrc`, "");
      await Deno.symlink("proj/bashrc", `${home}/.bashrc`);
      const human = await k.attach("work");
      await exec(human, `cd ${proj}`);
      const agent = await k.attach("work", token);
      assert.equal(((await exec(agent, "true", { position: "value" })).value as Rec).ok, true);
      const asked = async (src: string) => {
        try {
          const value = (await exec(agent, src, { position: "value" })).value as Rec;
          return `ran: ${value.status} ${JSON.stringify(value.err)}`;
        } catch (e) {
          if (!(e instanceof RpcError)) throw e;
          return `${e.code} ${JSON.stringify((e.data as Rec).needs_approval)}`;
        }
      };
      const cases: Record<string, string> = {
        "echo x > .husky/pre-commit": `${proj}/.husky/pre-commit`,
        "echo x >> team.gitconfig": `${proj}/team.gitconfig`,
        "echo x >> env.sh": `${proj}/env.sh`,
        "echo x >> bashrc": `${proj}/bashrc`,
      };
      const results: Record<string, string> = {};
      for (const src of Object.keys(cases)) results[src] = await asked(src);
      const expected = Object.fromEntries(
        Object.entries(cases).map((
          [src, path],
        ) => [
          src,
          `-32011 ${JSON.stringify([`fs.write ${JSON.stringify(path)} is a protected name`])}`,
        ]),
      );
      assert.deepEqual(results, expected);
      assert.match(
        await asked("echo x > notes.md && mkdir -p src && echo y > src/a.js"),
        /^ran: 0 /,
      );
      let planRef = "";
      try {
        await exec(agent, "echo lint > .husky/pre-commit");
      } catch (e) {
        if (!(e instanceof RpcError)) throw e;
        planRef = (e.data as Rec).plan_ref as string;
      }
      await human.request("approval.grant", { plan_ref: planRef });
      const applied = await agent.request("plan.apply", { plan_ref: planRef, position: "value" });
      assert.equal(((applied as Rec).value as Rec).ok, true, JSON.stringify(applied));
      assert.equal(Deno.readTextFileSync(`${proj}/.husky/pre-commit`), "lint\n");
    } finally {
      await k.cleanup();
    }
  },
);
