/**
 * Everyday git commands that rewrite the repository's `.git/config` as a side effect (P-SBX-6,
 * M-ONB-3), run by the `project` agent exactly as `shoal-kernel onboard` provisions it. The
 * sandbox keeps `.git/config` read-only, so such a command must be stopped by the static layer
 * with an approval naming that file, not allowed and then left half done by the sandbox
 * (`git branch -m`: "Branch is renamed, but update of config-file failed", exit 128).
 */
import assert from "node:assert/strict";
import type { RpcConnection } from "../../../src/protocol/rpc_client.ts";
import { RpcError } from "../../../src/protocol/errors.ts";
import { exec } from "../../_support/exec.ts";
import { hostGit } from "../../_support/git.ts";
import { hostTest, NEEDS_TIER_B } from "../../_support/host.ts";
import { startKernel, type TestKernel } from "../../_support/kernel.ts";
import { kernelCli } from "../../_support/principals.ts";
import type { Rec } from "../../_support/rec.ts";
import { sandbox } from "../../_support/sandbox.ts";

/**
 * A project cloned from `origin.git` (so `origin/master` exists) with a second branch `x`, its
 * kernel, and the project agent attached in it.
 */
async function withProjectAgent(
  body: (k: TestKernel, agent: RpcConnection, proj: string) => Promise<void>,
): Promise<void> {
  const box = await sandbox();
  const kernel = await startKernel([], box);
  try {
    const origin = `${box.dir}/origin`;
    await Deno.mkdir(origin);
    await hostGit(origin, "init", "-q", "-b", "master");
    await hostGit(origin, "commit", "-q", "--allow-empty", "-m", "a");
    const proj = `${box.dir}/proj`;
    await hostGit(box.dir, "clone", "-q", origin, proj);
    await hostGit(proj, "branch", "x");
    const r = await kernelCli(box, ["onboard", "agent:claude-code", "--project", proj]);
    assert.equal(r.code, 0, r.stderr);
    const agent = await kernel.connect();
    await agent.request("session.attach", { token: JSON.parse(r.stdout).token, cwd: proj });
    await body(kernel, agent, proj);
  } finally {
    await kernel.cleanup();
  }
}

/** What became of `src` run by the agent: the approval's protected paths, or how it ran. */
async function attempt(agent: RpcConnection, src: string): Promise<string> {
  try {
    const value = (await exec(agent, src, { position: "value" })).value as Rec;
    const err = String((value.err as Rec | undefined)?.v ?? value.err ?? "");
    return `ran: status ${value.status} ${err.trim().slice(0, 300)}`;
  } catch (e) {
    if (!(e instanceof RpcError)) throw e;
    return `${e.code} ${JSON.stringify((e.data as Rec).needs_approval ?? e.message)}`;
  }
}

hostTest(
  "P-SBX-6/M-ONB-3: git commands that rewrite .git/config (branch -m/-c/-u, tracking checkouts, a second git init) ask approval naming it instead of failing half done in the sandbox",
  NEEDS_TIER_B,
  () =>
    withProjectAgent(async (_k, agent, proj) => {
      const config = `${proj}/.git/config`;
      const asked = `-32011 ${JSON.stringify([`fs.write "${config}" is a protected name`])}`;
      const results: Record<string, string> = {};
      const cases = [
        "git branch -m x renamed",
        "git branch -M x renamed",
        "git branch --move x renamed",
        "git branch -c x copied",
        "git branch -u origin/master",
        "git branch --set-upstream-to=origin/master x",
        "git branch --unset-upstream",
        "git branch --track y origin/master",
        "git checkout -q -b t origin/master",
        "git checkout -q --track origin/master",
        "git switch -q -c t2 --track origin/master",
        "git switch -q -c t3 origin/master",
        "git init -q",
      ];
      for (const src of cases) results[src] = await attempt(agent, src);
      assert.deepEqual(results, Object.fromEntries(cases.map((src) => [src, asked])));
      const heads = () =>
        [...Deno.readDirSync(`${proj}/.git/refs/heads`)].map((e) => e.name).sort();
      assert.deepEqual(heads(), ["master", "x"], "nothing ran half way");
      // Branch work that leaves the configuration alone is not held up.
      for (
        const src of [
          "git branch",
          "git branch -vv",
          "git branch y",
          "git checkout -q -b local",
          "git switch -q -c other",
          "git switch -q master",
        ]
      ) {
        assert.match(await attempt(agent, src), /^ran: status 0 $/, src);
      }
      // Deleting a branch tries to drop its section too, but the branch goes either way.
      assert.match(await attempt(agent, "git branch -d other"), /^ran: status 0 /);
      assert.deepEqual(heads(), ["local", "master", "x", "y"]);
    }),
);

hostTest(
  "P-SBX-6: an approved git branch -m renames the branch and rewrites .git/config, the next one asks again",
  NEEDS_TIER_B,
  () =>
    withProjectAgent(async (k, agent, proj) => {
      const src = "git branch -m x renamed";
      let planRef = "";
      try {
        await exec(agent, src);
        assert.fail("ran without approval");
      } catch (e) {
        if (!(e instanceof RpcError)) throw e;
        assert.equal(e.code, -32011, e.message);
        planRef = (e.data as Rec).plan_ref as string;
      }
      const human = await k.attach();
      await human.request("approval.grant", { plan_ref: planRef });
      const applied = await agent.request("plan.apply", { plan_ref: planRef, position: "value" });
      assert.equal(((applied as Rec).value as Rec).ok, true, JSON.stringify(applied));
      const heads = [...Deno.readDirSync(`${proj}/.git/refs/heads`)].map((e) => e.name).sort();
      assert.deepEqual(heads, ["master", "renamed"]);
      assert.match(await attempt(agent, "git branch -m renamed again"), /^-32011 /);
    }),
);

/** A project whose history tracks `.vscode/settings.json`, different on branch `b2`. */
async function trackedSettings(proj: string): Promise<void> {
  await Deno.mkdir(`${proj}/.vscode`);
  await Deno.writeTextFile(`${proj}/.vscode/settings.json`, "{}\n");
  await Deno.writeTextFile(`${proj}/main.txt`, "one\n");
  await hostGit(proj, "add", "-A");
  await hostGit(proj, "commit", "-qm", "one");
  await hostGit(proj, "checkout", "-q", "-b", "b2");
  await Deno.writeTextFile(`${proj}/.vscode/settings.json`, '{"b2": true}\n');
  await Deno.writeTextFile(`${proj}/main.txt`, "two\n");
  await hostGit(proj, "commit", "-qam", "two");
  await hostGit(proj, "checkout", "-q", "master");
}

hostTest(
  "P-SBX-6/M-ONB-3: in a repository that tracks .vscode/, a branch switch, hard reset or merge by the project agent asks approval naming it instead of leaving the work tree half switched and stuck",
  NEEDS_TIER_B,
  () =>
    withProjectAgent(async (k, agent, proj) => {
      await trackedSettings(proj);
      const asked = `-32011 ${JSON.stringify([`fs.write "${proj}/.vscode" is a protected name`])}`;
      const results: Record<string, string> = {};
      const cases = [
        "git checkout -q b2",
        "git switch -q b2",
        "git merge -q b2",
        "git reset -q --hard b2",
        "git checkout -q -b c3 b2",
      ];
      for (const src of cases) results[src] = await attempt(agent, src);
      assert.deepEqual(results, Object.fromEntries(cases.map((src) => [src, asked])));
      const settings = () => Deno.readTextFileSync(`${proj}/.vscode/settings.json`);
      assert.equal(settings(), "{}\n", "nothing ran half way");
      // What leaves the work tree as it is runs.
      for (
        const src of [
          "git status --short",
          "git checkout -q -b c4",
          "git reset -q",
          "git stash list",
        ]
      ) {
        assert.match(await attempt(agent, src), /^ran: status 0 $/, src);
      }
      // Approved, the switch completes: the tree is b2's and clean.
      let planRef = "";
      try {
        await exec(agent, "git checkout -q b2");
      } catch (e) {
        if (!(e instanceof RpcError)) throw e;
        planRef = (e.data as Rec).plan_ref as string;
      }
      const human = await k.attach();
      await human.request("approval.grant", { plan_ref: planRef });
      const applied = await agent.request("plan.apply", { plan_ref: planRef, position: "value" });
      assert.equal(((applied as Rec).value as Rec).ok, true, JSON.stringify(applied));
      assert.equal(settings(), '{"b2": true}\n');
      assert.match(await attempt(agent, "git status --short"), /^ran: status 0 $/);
      const status = (await exec(agent, "git status --porcelain", { position: "value" })).value;
      assert.equal(JSON.stringify((status as Rec).out), JSON.stringify({ $: "str", v: "" }));
    }),
);

hostTest(
  "P-SBX-6/M-ONB-3: git sparse-checkout init/set/disable asks approval naming .git/config and .git/config.worktree, and git maintenance register and start are refused naming the user's git config, instead of failing in the sandbox ('could not write config file .git/config: Device or resource busy'); approved, sparse-checkout set works",
  NEEDS_TIER_B,
  () =>
    withProjectAgent(async (k, agent, proj) => {
      const asked = `-32011 ${
        JSON.stringify([
          `fs.write "${proj}/.git/config" is a protected name`,
          `fs.write "${proj}/.git/config.worktree" is a protected name`,
        ])
      }`;
      const cases = [
        "git sparse-checkout init",
        "git sparse-checkout set src",
        "git sparse-checkout set --cone src docs",
        "git sparse-checkout disable",
      ];
      const results: Record<string, string> = {};
      for (const src of cases) results[src] = await attempt(agent, src);
      assert.deepEqual(results, Object.fromEntries(cases.map((src) => [src, asked])));
      for (const src of ["git maintenance register", "git maintenance start"]) {
        assert.match(await attempt(agent, src), /^-32010 .*lacks fs\.write .*\/\.gitconfig/, src);
      }
      // reading the sparse checkout's state is not held up
      assert.match(await attempt(agent, "git sparse-checkout list"), /^ran: status 128 /);
      let planRef = "";
      try {
        await exec(agent, "git sparse-checkout set src");
      } catch (e) {
        if (!(e instanceof RpcError)) throw e;
        planRef = (e.data as Rec).plan_ref as string;
      }
      const human = await k.attach();
      await human.request("approval.grant", { plan_ref: planRef });
      const applied = await agent.request("plan.apply", { plan_ref: planRef, position: "value" });
      assert.equal(((applied as Rec).value as Rec).ok, true, JSON.stringify(applied));
      const list = (await exec(agent, "git sparse-checkout list", { position: "value" })).value;
      assert.equal(JSON.stringify((list as Rec).out), JSON.stringify({ $: "str", v: "src\n" }));
    }),
);
