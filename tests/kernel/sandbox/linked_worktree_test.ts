/**
 * A project that is a linked git worktree (M-ONB-3, as Claude Code's and Cursor's agent worktrees
 * are): with the `project` profile on it (M-ONB-2), git status, diff, add, commit and log work in
 * it through the real kernel and sandbox, while the repository's config, hooks and info, its
 * other worktrees and the worktree's own commondir and config.worktree stay the human's (P-SBX-6).
 */
import assert from "node:assert/strict";
import type { RpcConnection } from "../../../src/protocol/rpc_client.ts";
import { projectEntry } from "../../../src/kernel/policy/project_profile.ts";
import { exec } from "../../_support/exec.ts";
import { startKernel } from "../../_support/kernel.ts";
import { hostTest, NEEDS_TIER_B } from "../../_support/host.ts";
import { createToken, writePolicy } from "../../_support/principals.ts";
import type { Rec } from "../../_support/rec.ts";
import { sandbox } from "../../_support/sandbox.ts";
import { hostGit } from "../../_support/git.ts";
import { exists } from "../../_support/paths.ts";
import { rpcError } from "../../_support/rejection.ts";

/** The outcome of `src` run in value position, with its stdout and stderr text. */
async function run(conn: RpcConnection, src: string): Promise<{ ok: boolean; text: string }> {
  const value = (await exec(conn, src, { position: "value" })).value as Rec;
  return { ok: value.ok === true, text: JSON.stringify(value) };
}

/** git's output as the local human, unconfined. */
async function gitOut(cwd: string, ...args: string[]): Promise<string> {
  const out = await new Deno.Command("git", { args, cwd, stdout: "piped", stderr: "null" })
    .output();
  return new TextDecoder().decode(out.stdout).trim();
}

/**
 * A file's text, "" when it is absent: the kernel holds an absent `config.worktree` with an empty
 * placeholder while a sandbox lives (P-SBX-6), which git reads as its absence.
 */
function textOf(path: string): string {
  try {
    return Deno.readTextFileSync(path);
  } catch {
    return "";
  }
}

const IDENTITY =
  "GIT_AUTHOR_NAME=a GIT_AUTHOR_EMAIL=a@x GIT_COMMITTER_NAME=a GIT_COMMITTER_EMAIL=a@x";

/**
 * A repository `repo` with linked worktrees `feature` (the agent's project, `projectEntry`) and
 * `other`; `body` gets the agent attached in `feature` and the paths.
 */
async function withWorktree(
  body: (
    agent: RpcConnection,
    p: Record<string, string>,
    attach: () => Promise<RpcConnection>,
  ) => Promise<void>,
  project = "feature",
): Promise<void> {
  const box = await sandbox();
  const home = await Deno.realPath(`${box.dir}/home`);
  const p = {
    repo: `${home}/repo`,
    common: `${home}/repo/.git`,
    feature: `${home}/feature`,
    other: `${home}/other`,
    plain: `${home}/plain`,
  };
  await Deno.mkdir(p.repo);
  await Deno.mkdir(p.plain);
  await hostGit(p.repo, "init", "-q", "-b", "main");
  await Deno.writeTextFile(`${p.repo}/a`, "a\n");
  await hostGit(p.repo, "add", "a");
  await hostGit(p.repo, "commit", "-qm", "init");
  await hostGit(p.repo, "worktree", "add", "-q", p.feature, "-b", "feature");
  await hostGit(p.repo, "worktree", "add", "-q", p.other, "-b", "other");
  // a submodule's git directory in the worktree's own (where git keeps a linked worktree's)
  await hostGit(home, "init", "-q", "--bare", `${p.common}/worktrees/feature/modules/m`);
  const dir = project === "feature" ? p.feature : p.plain;
  const { secret } = await createToken(box, "agent:c", "c");
  const k = await startKernel(
    ["--policy", await writePolicy(box, { "agent:c": projectEntry(dir) })],
    box,
  );
  try {
    const human = await k.attach("work");
    await exec(human, `cd ${dir}`);
    const attach = () => k.attach("work", secret);
    await body(await attach(), p, attach);
  } finally {
    await k.cleanup();
  }
}

hostTest(
  "M-ONB-3 in a project that is a linked git worktree, git status, diff, add, commit, log, stash and switch -c work (they were denied: 'lacks fs.read <repo>/.git'), the commit lands on the worktree's branch and the human's main branch and files stay as they were",
  NEEDS_TIER_B,
  () =>
    withWorktree(async (agent, p) => {
      const main = await gitOut(p.repo, "rev-parse", "main");
      const status = await run(agent, "git status --short");
      assert.ok(status.ok, status.text);
      assert.ok((await run(agent, "echo more >> a && git diff --stat")).ok);
      const commit = await run(agent, `git add a && ${IDENTITY} git commit -qm agent-work`);
      assert.ok(commit.ok, commit.text);
      const log = await run(agent, "git log --oneline -1");
      assert.ok(log.ok && log.text.includes("agent-work"), log.text);
      assert.equal(await gitOut(p.repo, "log", "-1", "--format=%s", "feature"), "agent-work");
      for (
        const step of [
          `echo wip >> a && ${IDENTITY} git stash -q`,
          "git stash pop -q",
          `git switch -q -c topic && git add a && ${IDENTITY} git commit -qm topic-work`,
          "git switch -q feature",
        ]
      ) {
        const r = await run(agent, step);
        assert.ok(r.ok, `${step}: ${r.text}`);
      }
      assert.equal(await gitOut(p.repo, "log", "-1", "--format=%s", "topic"), "topic-work");
      assert.equal(await gitOut(p.repo, "rev-parse", "main"), main);
      // the sandbox lives on: the kernel made no placeholder in the human's git directory
      for (const dir of ["objects", "refs", "logs", "worktrees/feature"]) {
        const names = [...Deno.readDirSync(`${p.common}/${dir}`)].map((e) => e.name);
        assert.deepEqual(names.filter((n) => n.startsWith(".")), [], dir);
      }
      assert.equal(await gitOut(p.repo, "status", "--short"), "");
      assert.equal(await gitOut(p.other, "status", "--short"), "");
    }),
);

hostTest(
  "M-ONB-3 in a linked worktree, deleting a branch or tag (packed or loose), git stash drop and pop and git pack-refs work (they failed: 'Unable to create <repo>/.git/packed-refs.lock: Read-only file system'), and the human's main branch and worktrees stay as they were",
  NEEDS_TIER_B,
  () =>
    withWorktree(async (agent, p) => {
      await hostGit(p.repo, "branch", "old");
      await hostGit(p.repo, "tag", "t1");
      await hostGit(p.repo, "pack-refs", "--all");
      const main = await gitOut(p.repo, "rev-parse", "main");
      for (
        const step of [
          "git branch -d old",
          "git tag -d t1",
          "git branch tmp && git branch -D tmp",
          `echo x >> a && ${IDENTITY} git stash -q && git stash drop -q`,
          `echo y >> a && ${IDENTITY} git stash -q && git stash pop -q && git checkout -q a`,
          "git pack-refs --all",
        ]
      ) {
        // (git branch -d also rewrites the config, to drop the branch's section: read-only, it
        // says it could not, as in a project that is the main worktree)
        const r = await run(agent, `${step} 2>&1`);
        assert.ok(r.ok && !/Read-only|fatal/.test(r.text), `${step}: ${r.text}`);
      }
      assert.equal(await gitOut(p.repo, "branch", "--list", "old", "tmp"), "");
      assert.equal(await gitOut(p.repo, "tag", "--list"), "");
      assert.equal(await gitOut(p.feature, "stash", "list"), "");
      assert.equal(await gitOut(p.repo, "rev-parse", "main"), main);
      assert.equal(await gitOut(p.repo, "status", "--short"), "");
      assert.equal(await gitOut(p.other, "status", "--short"), "");
      const trees = await gitOut(p.repo, "worktree", "list", "--porcelain");
      assert.equal(trees.split("\n").filter((l) => l.startsWith("worktree ")).length, 3);
    }),
);

hostTest(
  "M-ONB-3 in a linked-worktree project the agent adds a worktree of its own inside it, commits and switches there (it was made, then read-only from the next exec: 'Unable to create <repo>/.git/worktrees/side/index.lock: Read-only file system')",
  NEEDS_TIER_B,
  () =>
    withWorktree(async (agent, p) => {
      for (
        const step of [
          "git worktree add -q side -b side",
          `cd side && echo z >> a && ${IDENTITY} git commit -qam side-work && cd ..`,
          "cd side && git switch -q -c side2 && git status --short && cd ..",
        ]
      ) {
        const r = await run(agent, `${step} 2>&1`);
        assert.ok(r.ok, `${step}: ${r.text}`);
      }
      assert.equal(await gitOut(p.repo, "log", "-1", "--format=%s", "side"), "side-work");
      assert.equal(await gitOut(`${p.feature}/side`, "branch", "--show-current"), "side2");
    }),
);

hostTest(
  "P-SBX-6 an agent in a linked worktree cannot write the repository's config, hooks or info, the main worktree's HEAD and index, another worktree's git directory or files, the main work tree, its own commondir, config.worktree or .git file: the human's git runs none of its code",
  NEEDS_TIER_B,
  () =>
    withWorktree(async (agent, p) => {
      const own = `${p.common}/worktrees/feature`;
      const targets = [
        `${p.common}/config`,
        `${p.common}/hooks/post-commit`,
        `${p.common}/info/attributes`,
        `${p.common}/HEAD`,
        `${p.common}/index`,
        `${p.common}/description`,
        `${p.common}/info/exclude`,
        `${p.common}/worktrees/other/HEAD`,
        `${own}/commondir`,
        `${own}/config.worktree`,
        `${own}/modules/m/config`,
        `${own}/modules/m/hooks/post-checkout`,
        `${p.feature}/.git`,
        `${p.other}/a`,
        `${p.repo}/a`,
      ];
      const before = targets.map(textOf);
      for (const target of targets) {
        // through python: the sandbox is the wall under test, not the static layer
        const r = await run(agent, `python3 -c "open('${target}', 'a').write('x\\\\n')"`);
        assert.equal(r.ok, false, `the agent wrote ${target}`);
      }
      assert.deepEqual(targets.map(textOf), before);
      assert.equal(exists(`${p.common}/hooks/post-commit`), false);
      // the static layer refuses them too, and asks approval for the worktree's own protected ones
      const denied = await rpcError(exec(agent, `echo x >> ${p.common}/config`));
      assert.equal(denied.code, -32010, JSON.stringify(denied.data));
      for (const part of ["commondir", "config.worktree", "modules/m/config"]) {
        const asked = await rpcError(exec(agent, `echo x >> ${own}/${part}`));
        assert.equal(asked.code, -32011, `${part}: ${JSON.stringify(asked.data)}`);
      }
    }),
);

hostTest(
  "P-SBX-6 in a linked-worktree project, with the common directory writable for packed-refs, the agent cannot make an absent modules/ or info/ there: a submodule repository it made (config with core.fsmonitor) is the one the human's git submodule update --init would use",
  NEEDS_TIER_B,
  () =>
    withWorktree(async (agent, p, attach) => {
      await Deno.remove(`${p.common}/info`, { recursive: true });
      const again = await attach(); // a sandbox for the common directory as it is now
      for (const dir of ["modules/m", "info"]) {
        const made = await run(
          again,
          `python3 -c "import os; os.makedirs('${p.common}/${dir}', exist_ok=True); open('${p.common}/${dir}/config', 'w')"`,
        );
        assert.equal(made.ok, false, `the agent made ${dir}: ${made.text}`);
        assert.equal(exists(`${p.common}/${dir}/config`), false, dir);
      }
      assert.ok((await run(again, "git status --short")).ok);
      assert.equal(await gitOut(p.repo, "status", "--short"), "");
      void agent;
    }),
);

hostTest(
  "P-SBX-4/P-SBX-6 in a linked-worktree project, runs longer than a sandbox's idle grace one after another all finish: every other one was SIGKILLed ('a protected path of a sandbox … was removed or replaced on the host'), since the next exec's scan took the placeholder at the common directory's absent modules/ for the human's directory, started a second sandbox binding it unheld, and the first one removed it when it stopped",
  NEEDS_TIER_B,
  () =>
    withWorktree(async (agent, p) => {
      for (const n of [1, 2, 3]) {
        const r = await run(agent, `sleep 2; echo run-${n}`);
        assert.ok(r.ok && r.text.includes(`run-${n}`), `run ${n}: ${r.text}`);
      }
      // the human's common directory holds no modules/ once the agent's sandboxes are gone
      assert.equal(await gitOut(p.repo, "status", "--short"), "");
    }),
);

hostTest(
  "P-SBX-6 names an agent floods into a linked worktree's common directory (more than the kernel looks at) leave it read-only whole from the next exec, not writable: config, HEAD and new names stay as they were",
  NEEDS_TIER_B,
  () =>
    withWorktree(async (agent, p) => {
      const flood = await run(
        agent,
        `python3 -c "[open('${p.common}/junk%d' % i, 'w') for i in range(1200)]"`,
      );
      assert.ok(flood.ok, flood.text);
      const head = textOf(`${p.common}/HEAD`);
      for (const name of ["config", "HEAD", "new"]) {
        const r = await run(agent, `python3 -c "open('${p.common}/${name}', 'a').write('x')"`);
        assert.equal(r.ok, false, `the agent wrote ${name}`);
      }
      assert.equal(textOf(`${p.common}/HEAD`), head);
      assert.equal(exists(`${p.common}/new`), false);
    }),
);

Deno.test({
  name:
    "SPEC decision needed (P-SBX-6 vs M-ONB-3): in a linked-worktree project the common directory is writable (deleting a branch rewrites packed-refs through packed-refs.lock beside it), so the agent can make there what is absent and cannot be held without misleading the human's git: the main worktree's rebase-merge/ with exec lines in git-rebase-todo, which run as the human at their git rebase --continue; should such state names stay uncreatable (how, with no placeholder), or is packed-refs to stay read-only and branch deletion to fail?",
  ignore: true,
  fn: () =>
    withWorktree(async (agent, p) => {
      await run(
        agent,
        `python3 -c "import os; os.makedirs('${p.common}/rebase-merge'); open('${p.common}/rebase-merge/git-rebase-todo', 'w').write('exec touch /tmp/pwned\\n')"`,
      );
      assert.equal(exists(`${p.common}/rebase-merge`), false);
    }),
});

hostTest(
  "M-ONB-3 a project the human makes a linked worktree after the agent attached (git worktree add into the empty project before the agent's first exec) gets its git directories at the agent's next exec, not only at its next attach",
  NEEDS_TIER_B,
  () =>
    withWorktree(async (agent, p) => {
      await hostGit(p.repo, "worktree", "add", "-q", p.plain, "-b", "late");
      const status = await run(agent, "git status --short");
      assert.ok(status.ok, status.text);
      const commit = await run(
        agent,
        `echo b > b && git add b && ${IDENTITY} git commit -qm late-work`,
      );
      assert.ok(commit.ok, commit.text);
      assert.equal(await gitOut(p.repo, "log", "-1", "--format=%s", "late"), "late-work");
    }, "plain"),
);

hostTest(
  "a .git file an agent writes in a project that is no worktree, naming another worktree's git directory, gains it no grant: the back link git wrote names that worktree, not the project",
  NEEDS_TIER_B,
  () =>
    withWorktree(async (agent, p, attach) => {
      const forged = await run(agent, `echo 'gitdir: ${p.common}/worktrees/other' > .git`);
      assert.ok(forged.ok, forged.text);
      const again = await attach();
      const read = await exec(again, `cat ${p.common}/config`).catch((e) => e);
      assert.ok(read instanceof Error, "the forged .git file granted the repository");
      const r = await run(again, `python3 -c "open('${p.common}/objects/x', 'w')"`);
      assert.equal(r.ok, false, "the forged .git file made the object store writable");
      assert.equal(exists(`${p.common}/objects/x`), false);
    }, "plain"),
);

Deno.test({
  name:
    "SPEC decision needed (M-ONB-3 vs P-SBX-6): an agent in a linked worktree writes the shared refs/, so it can move the branch checked out in the human's main worktree (or another worktree) to any commit, e.g. one adding .envrc or .vscode/tasks.json that the human's next checkout or reset writes; git itself refuses that for a commit, but refs/heads/main is a plain file under the granted refs/; should the refs of branches checked out elsewhere stay read-only (a packed one has no file to bind)?",
  ignore: true,
  fn: () =>
    withWorktree(async (agent, p) => {
      const main = await gitOut(p.repo, "rev-parse", "main");
      await run(agent, `echo x > f && git add f && ${IDENTITY} git commit -qm x`);
      await run(
        agent,
        `python3 -c "open('${p.common}/refs/heads/main', 'w').write(open('${p.common}/refs/heads/feature').read())"`,
      );
      assert.equal(await gitOut(p.repo, "rev-parse", "main"), main);
    }),
});
