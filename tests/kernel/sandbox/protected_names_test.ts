/**
 * Protected names inside write roots (SPEC §7.8 P-SBX-6), through the real kernel, real bwrap and
 * token principals: what a later unconfined program runs as the local human stays read-only in
 * the sandbox, and the static layer asks for approval before writing it.
 */
import assert from "node:assert/strict";
import type { RpcConnection } from "../../../src/protocol/rpc_client.ts";
import { PROTECTED_DIRS, PROTECTED_FILES } from "../../../src/kernel/sandbox/protected_names.ts";
import { SCAN_DIR_LIMIT } from "../../../src/kernel/sandbox/scan_listings.ts";
import { exec } from "../../_support/exec.ts";
import { launchKernel, startKernel, type TestKernel } from "../../_support/kernel.ts";
import { hostTest, NEEDS_TIER_B } from "../../_support/host.ts";
import { kernelPid } from "../../_support/proc.ts";
import { AGENT_RIGHTS, createToken, writePolicy } from "../../_support/principals.ts";
import type { Rec } from "../../_support/rec.ts";
import { rpcError } from "../../_support/rejection.ts";
import { sandbox } from "../../_support/sandbox.ts";
import { pollUntil, waitUntil } from "../../_support/wait.ts";
import { hostGit } from "../../_support/git.ts";

/** An agent that may run anything (opaque: allow) and write its project, sandboxed. */
function coder(extra: Rec = {}): Rec {
  return {
    fs: {
      read: ["~/proj/**", "~/scripts/**"],
      write: ["~/proj/**"],
      delete: ["~/proj/**"],
    },
    ...AGENT_RIGHTS,
    ...extra,
  };
}

interface World {
  k: TestKernel;
  proj: string;
  agent: RpcConnection;
  /** The agent's token. */
  token: string;
  /**
   * Runs `script` with sh as the agent, from a file the static layer does not read (so only the
   * sandbox stands in its way), in the project; returns its stdout.
   */
  sh(script: string): Promise<string>;
}

/**
 * A kernel whose `agent:c` has `policy`, attached to a session whose cwd is the project, after
 * `prepare` has laid out the project on the host; after `body`, the kernel is stopped and
 * `after` sees the project as the sandbox left it.
 */
async function world(
  policy: Rec,
  prepare: (proj: string) => Promise<void>,
  body: (w: World) => Promise<void>,
  after: (proj: string) => void = () => {},
): Promise<void> {
  const box = await sandbox();
  const home = `${box.dir}/home`;
  const proj = `${home}/proj`;
  await Deno.mkdir(proj);
  await Deno.mkdir(`${home}/scripts`);
  await prepare(proj);
  const token = (await createToken(box, "agent:c", "c")).secret;
  let k: TestKernel | undefined;
  let n = 0;
  try {
    k = await startKernel(["--policy", await writePolicy(box, { "agent:c": policy })], box);
    const human = await k.attach("work");
    await exec(human, `cd ${proj}`);
    const agent = await k.attach("work", token);
    const sh = async (script: string) => {
      const file = `${home}/scripts/${n++}.sh`;
      await Deno.writeTextFile(file, script);
      const outcome = (await exec(agent, `sh ${file}`, { position: "value" })).value as Rec;
      return String((outcome.out as Rec)?.v ?? "");
    };
    await body({ k, proj, agent, token, sh });
    await k.stop();
    after(proj);
  } finally {
    if (k) await k.cleanup();
    else await box.cleanup();
  }
}

/** The text at `path` on the host, or null when there is nothing there. */
function read(path: string): string | null {
  try {
    const info = Deno.lstatSync(path);
    return info.isDirectory ? "<dir>" : info.isSymlink ? "<link>" : Deno.readTextFileSync(path);
  } catch {
    return null;
  }
}

/** Every path below `dir` (relative, sorted), what the host holds. */
function tree(dir: string, prefix = ""): string[] {
  const out: string[] = [];
  for (const entry of Deno.readDirSync(dir)) {
    const rel = `${prefix}${entry.name}`;
    out.push(rel);
    if (entry.isDirectory && !entry.isSymlink) out.push(...tree(`${dir}/${entry.name}`, `${rel}/`));
  }
  return out.sort();
}

/** Shell lines that try every way to write, replace or create `path` (a file name). */
function fileAttacks(path: string): string {
  return [
    `echo x > ${path}`,
    `echo x >> ${path}`,
    `python3 -c "open('${path}','w').write('x')"`,
    `echo x > /tmp/src && cp /tmp/src ${path}`,
    `echo x > ${path}.new && mv -f ${path}.new ${path}; rm -f ${path}.new`,
    `ln -sf /tmp/src ${path}`,
    `rm -f ${path}`,
  ].map((line) => `(${line}) 2>/dev/null`).join("\n");
}

/** Shell lines that try every way to write into, replace or create directory `path`. */
function dirAttacks(path: string): string {
  return [
    `mkdir -p ${path}`,
    `echo x > ${path}/settings.json`,
    `mkdir ${path}/x`,
    `rm -rf ${path}`,
    `mv ${path} ${path}.old`,
    `ln -s /tmp ${path}`,
    `python3 -c "import os; os.makedirs('${path}/y', exist_ok=True)"`,
  ].map((line) => `(${line}) 2>/dev/null`).join("\n");
}

const DEEP = "sub/a/b";

hostTest(
  "each protected name is read-only at the root whether or not it exists, and at depth 3 when it exists; nothing is left in the project",
  NEEDS_TIER_B,
  async () => {
    const present = [".envrc", ".mcp.json", ".vscode", ".claude"]; // at the root; the rest absent
    let before: string[] = [];
    await world(coder(), async (proj) => {
      await Deno.mkdir(`${proj}/${DEEP}`, { recursive: true });
      for (const name of PROTECTED_FILES) {
        await Deno.writeTextFile(`${proj}/${DEEP}/${name}`, "orig");
      }
      for (const name of PROTECTED_DIRS) {
        await Deno.mkdir(`${proj}/${DEEP}/${name}`);
        await Deno.writeTextFile(`${proj}/${DEEP}/${name}/settings.json`, "orig");
      }
      for (const name of present) {
        if (PROTECTED_DIRS.includes(name)) {
          await Deno.mkdir(`${proj}/${name}`);
          await Deno.writeTextFile(`${proj}/${name}/settings.json`, "orig");
        } else await Deno.writeTextFile(`${proj}/${name}`, "orig");
      }
      await Deno.writeTextFile(`${proj}/ordinary.txt`, "orig");
      before = tree(proj);
    }, async ({ proj, sh }) => {
      const script = [
        ...PROTECTED_FILES.flatMap((name) => [fileAttacks(name), fileAttacks(`${DEEP}/${name}`)]),
        ...PROTECTED_DIRS.flatMap((name) => [dirAttacks(name), dirAttacks(`${DEEP}/${name}`)]),
        "echo ok > ordinary.txt && echo new > made.txt && rm made.txt && echo done",
      ].join("\n");
      assert.equal((await sh(script)).trim(), "done", "ordinary writes work");
      // an absent one is held by an empty placeholder directory while a sandbox binds it
      for (const name of PROTECTED_FILES) {
        const expected = present.includes(name) ? "orig" : "<dir>";
        assert.equal(read(`${proj}/${name}`), expected, `${name} at the root`);
        assert.equal(read(`${proj}/${DEEP}/${name}`), "orig", `${name} at depth 3`);
      }
      for (const name of PROTECTED_DIRS) {
        const expected = present.includes(name) ? "orig" : null;
        assert.equal(read(`${proj}/${name}/settings.json`), expected, `${name}/ at the root`);
        assert.ok(["<dir>", null].includes(read(`${proj}/${name}`)), `${name}/ at the root`);
        assert.equal(read(`${proj}/${DEEP}/${name}/settings.json`), "orig", `${name}/ at depth 3`);
        assert.equal(read(`${proj}/${DEEP}/${name}.old`), null, `${name}/ not renamed`);
      }
      assert.equal(read(`${proj}/ordinary.txt`), "ok\n");
    }, (proj) => {
      assert.deepEqual(tree(proj), before, "the sandbox left nothing in the project");
    });
  },
);

hostTest(
  "git init in a subdirectory works; its hooks and config are protected from the next exec on, and git commit still works",
  NEEDS_TIER_B,
  async () => {
    await world(coder(), async () => {}, async ({ proj, sh }) => {
      const init = await sh(
        "git init -q sub/repo && git -C sub/repo config user.email a@b && " +
          "git -C sub/repo config user.name a && echo inited",
      );
      assert.equal(init.trim(), "inited");
      await sh(
        [
          "(echo evil > sub/repo/.git/hooks/pre-commit) 2>/dev/null",
          "(chmod +x sub/repo/.git/hooks/pre-commit) 2>/dev/null",
          "(printf '[core]\\n\\thooksPath = /tmp\\n' >> sub/repo/.git/config) 2>/dev/null",
          "(git -C sub/repo config core.fsmonitor evil) 2>/dev/null",
          "(mv sub/repo/.git sub/repo/g && mkdir -p sub/repo/.git/hooks && " +
          "echo evil > sub/repo/.git/hooks/pre-commit) 2>/dev/null",
          "(rm -rf sub/repo/.git/hooks) 2>/dev/null",
        ].join("\n"),
      );
      assert.equal(read(`${proj}/sub/repo/.git/hooks/pre-commit`), null);
      assert.ok(!read(`${proj}/sub/repo/.git/config`)!.includes("hooksPath"));
      assert.ok(!read(`${proj}/sub/repo/.git/config`)!.includes("fsmonitor"));
      assert.equal(read(`${proj}/sub/repo/g`), null, "the .git directory is pinned");
      const commit = await sh(
        "cd sub/repo && echo a > a && git add -A && git commit -qm x && git log --oneline | wc -l",
      );
      assert.equal(commit.trim(), "1");
    });
  },
);

hostTest(
  "a protection the host removes under a living sandbox (a placeholder deleted, .git made anew) is in place again at the agent's next exec",
  NEEDS_TIER_B,
  () =>
    world(coder(), async (proj) => {
      await Deno.mkdir(`${proj}/.git/hooks`, { recursive: true });
      await Deno.writeTextFile(`${proj}/.git/config`, "[core]\n");
    }, async ({ proj, sh }) => {
      assert.equal(await sh("echo up"), "up\n"); // the sandbox lives on, with its warm shell
      assert.equal(read(`${proj}/.envrc`), "<dir>", "the placeholder is there while it lives");
      // what a human's `git clean -fdx` or file manager does to these odd directories, and a
      // repository made anew: the same names as before, so the same view
      Deno.removeSync(`${proj}/.envrc`);
      Deno.removeSync(`${proj}/.vscode`);
      Deno.removeSync(`${proj}/.git`, { recursive: true });
      await Deno.mkdir(`${proj}/.git/hooks`, { recursive: true });
      await Deno.writeTextFile(`${proj}/.git/config`, "[core]\n");
      await sh(
        [
          fileAttacks(".envrc"),
          dirAttacks(".vscode"),
          fileAttacks(".git/config"),
          fileAttacks(".git/commondir"),
        ].join("\n") + `\n(echo x > .git/hooks/pre-commit) 2>/dev/null`,
      );
      for (const name of [".envrc", ".vscode"]) {
        const found = read(`${proj}/${name}`);
        assert.ok(found === null || found === "<dir>", `${name} on the host: ${found}`);
      }
      assert.equal(read(`${proj}/.git/config`), "[core]\n");
      // the placeholders of the new .git's absent commondir and config.worktree: files git reads
      // as their absence
      assert.deepEqual(tree(`${proj}/.git`), ["commondir", "config", "config.worktree", "hooks"]);
      assert.equal(read(`${proj}/.git/commondir`), ".\n");
      assert.deepEqual(tree(proj).filter((p) => /^\.(envrc|vscode)./.test(p)), []);
    }),
);

hostTest(
  "a placeholder deleted between two execs is made again for the next one, which runs (in a new sandbox, not killed)",
  NEEDS_TIER_B,
  () =>
    world(coder(), () => Promise.resolve(), async ({ proj, sh }) => {
      assert.equal(await sh("echo up"), "up\n"); // its warm shell waits in that sandbox
      Deno.removeSync(`${proj}/.envrc`);
      Deno.removeSync(`${proj}/.vscode`);
      const out = await sh(`${fileAttacks(".envrc")}\n${dirAttacks(".vscode")}\necho done`);
      assert.equal(out, "done\n");
      assert.equal(read(`${proj}/.envrc`), "<dir>", "a placeholder again");
      assert.equal(read(`${proj}/.vscode`), "<dir>");
      assert.deepEqual(tree(proj).filter((p) => /^\.(envrc|vscode)./.test(p)), []);
    }),
);

hostTest(
  "a protection the host removes while a run goes on ends that run's sandbox before the run can use the freed name",
  NEEDS_TIER_B,
  () =>
    world(coder(), () => Promise.resolve(), async ({ proj, agent }) => {
      const script = `${proj}/../scripts/waits.sh`;
      await Deno.writeTextFile(
        script,
        "touch started\nwhile [ ! -e go ]; do sleep 0.05; done\n" +
          `python3 -c "open('.envrc','w').write('pwned')"\n`,
      );
      let ended = false;
      const run = exec(agent, `sh ${script}`, { position: "value" }).catch((e) => e)
        .finally(() => ended = true);
      assert.ok(await waitUntil(() => read(`${proj}/started`) !== null, 10_000), "the run started");
      assert.equal(read(`${proj}/.envrc`), "<dir>", "its placeholder is there");
      Deno.removeSync(`${proj}/.envrc`); // the human deletes it meanwhile
      // Bounded for the old behaviour only: the run would wait for \`go\` for good.
      const stopped = await waitUntil(() => ended, 5_000);
      await Deno.writeTextFile(`${proj}/go`, "");
      await run;
      assert.ok(stopped, "the run's sandbox was stopped once the placeholder went");
      const found = read(`${proj}/.envrc`);
      assert.ok(found === null || found === "<dir>", `.envrc on the host: ${found}`);
    }),
);

hostTest(
  "renaming or deleting a parent does not defeat a protection: mv .git g; mkdir .git; and mv sub x",
  NEEDS_TIER_B,
  async () => {
    await world(coder(), async (proj) => {
      const git = new Deno.Command("git", { args: ["init", "-q", proj] });
      assert.equal((await git.output()).code, 0);
      await Deno.mkdir(`${proj}/sub/a/b/c`, { recursive: true });
      await Deno.writeTextFile(`${proj}/sub/a/b/c/.envrc`, "orig");
    }, async ({ proj, sh }) => {
      await sh(
        [
          "(mv .git g && mkdir -p .git/hooks && echo evil > .git/hooks/pre-commit) 2>/dev/null",
          "(rm -rf .git; mkdir -p .git/hooks; echo evil > .git/hooks/pre-commit) 2>/dev/null",
          "(echo evil > .git/config) 2>/dev/null",
          "(mv sub x && mkdir -p sub/a/b/c && echo evil > sub/a/b/c/.envrc) 2>/dev/null",
          "(mv sub/a/b sub/a/z && mkdir -p sub/a/b/c && echo evil > sub/a/b/c/.envrc) 2>/dev/null",
          "(rm -rf sub; mkdir -p sub/a/b/c; echo evil > sub/a/b/c/.envrc) 2>/dev/null",
          "echo moved > sub/a/m && mv sub/a/m m",
        ].join("\n"),
      );
      assert.equal(read(`${proj}/m`), "moved\n", "a mv out of a pinned directory copies");
      assert.equal(read(`${proj}/sub/a/m`), null);
      assert.equal(read(`${proj}/.git/hooks/pre-commit`), null);
      assert.equal(read(`${proj}/g`), null);
      assert.ok(read(`${proj}/.git/config`)!.includes("[core]"));
      assert.equal(read(`${proj}/x`), null);
      assert.equal(read(`${proj}/sub/a/z`), null);
      assert.equal(read(`${proj}/sub/a/b/c/.envrc`), "orig");
      assert.equal(read(`${proj}/.git`), "<dir>");
    });
  },
);

hostTest(
  "writable_protected lifts exactly the named ones",
  NEEDS_TIER_B,
  async () => {
    await world(coder({ writable_protected: [".vscode", ".git/hooks"] }), async (proj) => {
      const git = new Deno.Command("git", { args: ["init", "-q", proj] });
      assert.equal((await git.output()).code, 0);
      await Deno.mkdir(`${proj}/${DEEP}/.vscode`, { recursive: true });
    }, async ({ proj, sh }) => {
      await sh(
        [
          "mkdir -p .vscode && echo x > .vscode/settings.json",
          `echo x > ${DEEP}/.vscode/settings.json`,
          "echo x > .git/hooks/pre-commit",
          "(echo x > .envrc) 2>/dev/null",
          "(echo x > .idea) 2>/dev/null",
          "(echo x >> .git/config) 2>/dev/null",
        ].join("\n"),
      );
      assert.equal(read(`${proj}/.vscode/settings.json`), "x\n");
      assert.equal(read(`${proj}/${DEEP}/.vscode/settings.json`), "x\n");
      assert.equal(read(`${proj}/.git/hooks/pre-commit`), "x\n");
      assert.equal(read(`${proj}/.envrc`), "<dir>");
      assert.equal(read(`${proj}/.idea`), "<dir>");
      assert.ok(!read(`${proj}/.git/config`)!.endsWith("x\n"));
    });
  },
);

hostTest(
  "the static layer asks for approval (-32011) before writing a protected name in grant, never for git commit",
  NEEDS_TIER_B,
  async () => {
    await world(coder({ opaque: "ask" }), async (proj) => {
      await Deno.mkdir(`${proj}/${DEEP}`, { recursive: true });
    }, async ({ proj, agent }) => {
      for (
        const src of [
          "echo x > .envrc",
          `echo x > ${DEEP}/.vscode/settings.json`,
          "echo ../x > .git/commondir",
          "echo '[core]' > .git/config.worktree",
          "echo ../x > .git/worktrees/w/commondir",
          "echo '[core]' > .git/modules/m/config.worktree",
        ]
      ) {
        const e = await rpcError(exec(agent, src));
        assert.equal(e.code, -32011, src);
      }
      const run = (src: string) =>
        exec(agent, src, { position: "value" }).catch((e) => {
          throw new Error(`${src}: ${e.message} ${JSON.stringify(e.data)}`);
        });
      await run("echo x > notes.txt");
      await run(
        "export GIT_AUTHOR_NAME=a GIT_AUTHOR_EMAIL=a@b GIT_COMMITTER_NAME=a GIT_COMMITTER_EMAIL=a@b",
      );
      const out = await run(
        "git init -q && git add -A && git commit -qm x && git log --oneline | wc -l",
      );
      assert.equal(String(((out.value as Rec).out as Rec).v).trim(), "1");
      assert.ok(["<dir>", null].includes(read(`${proj}/.envrc`)));
    });
  },
);

hostTest(
  "a lifted name needs no approval in the static layer",
  NEEDS_TIER_B,
  async () => {
    await world(coder({ opaque: "ask", writable_protected: [".envrc"] }), async () => {}, async (
      { proj, agent },
    ) => {
      await exec(agent, "echo x > .envrc");
      assert.equal(read(`${proj}/.envrc`), "x\n");
      assert.equal((await rpcError(exec(agent, "echo x > .mcp.json"))).code, -32011);
    });
  },
);

hostTest(
  "an approved plan writes the protected path it was approved for; the next write asks again",
  NEEDS_TIER_B,
  async () => {
    await world(coder({ opaque: "ask" }), async () => {}, async ({ k, proj, agent }) => {
      const src = "echo x > .envrc";
      const asked = await rpcError(exec(agent, src));
      assert.equal(asked.code, -32011);
      const planRef = (asked.data as Rec).plan_ref as string;
      const human = await k.attach("work");
      await human.request("approval.grant", { plan_ref: planRef });
      const applied = await agent.request("plan.apply", { plan_ref: planRef, position: "value" });
      assert.equal(((applied as Rec).value as Rec).ok, true);
      assert.equal(read(`${proj}/.envrc`), "x\n");
      assert.equal((await rpcError(exec(agent, "echo y > .envrc"))).code, -32011);
      assert.equal(read(`${proj}/.envrc`), "x\n");
    });
  },
);

hostTest(
  "a PTY program is held off protected names too, and its placeholders go when it is closed",
  NEEDS_TIER_B,
  async () => {
    await world(coder(), async (proj) => {
      await Deno.mkdir(`${proj}/${DEEP}/.vscode`, { recursive: true });
    }, async ({ k, proj }) => {
      const token = (await createToken(k.box, "agent:p", "p")).secret;
      await k.stop(); // the exec's residents and their placeholders go with the kernel
      assert.deepEqual(tree(proj), ["sub", "sub/a", "sub/a/b", "sub/a/b/.vscode"]);
      const policy = await writePolicy(k.box, { "agent:c": coder(), "agent:p": coder() });
      const k2 = await startKernel(["--policy", policy], k.box);
      try {
        const human = await k2.attach("pty");
        await exec(human, `cd ${proj}`);
        const agent = await k2.attach("pty", token);
        const script = "echo x > .envrc; echo x > sub/a/b/.vscode/s.json; echo done; sleep 30";
        const opened = await agent.request("pty.open", { cmd: "sh", args: ["-c", script] }) as Rec;
        let screen = "";
        for (let i = 0; i < 100 && !screen.includes("done"); i++) {
          const r = await agent.request("pty.read", { pty_id: opened.pty_id }) as Rec;
          screen = (r.screen as string[]).join("\n");
          await new Promise((resolve) => setTimeout(resolve, 100));
        }
        assert.match(screen, /done/);
        assert.equal(read(`${proj}/.envrc`), "<dir>", "held while the PTY's sandbox lives");
        assert.equal(read(`${proj}/${DEEP}/.vscode/s.json`), null);
        await agent.request("pty.close", { pty_id: opened.pty_id });
        await k2.stop();
        assert.deepEqual(tree(proj), ["sub", "sub/a", "sub/a/b", "sub/a/b/.vscode"]);
      } finally {
        await k2.stop().catch(() => {});
      }
    });
  },
);

hostTest(
  "a PTY's sandbox ends when the host removes one of its protections while it runs",
  NEEDS_TIER_B,
  () =>
    world(coder(), () => Promise.resolve(), async ({ proj, agent }) => {
      const script = "echo ready; sleep 60";
      const opened = await agent.request("pty.open", { cmd: "sh", args: ["-c", script] }) as Rec;
      const screen = () => agent.request("pty.read", { pty_id: opened.pty_id }) as Promise<Rec>;
      await pollUntil(screen, (r) => (r.screen as string[]).join("\n").includes("ready"));
      assert.equal(read(`${proj}/.envrc`), "<dir>", "held while the PTY's sandbox lives");
      Deno.removeSync(`${proj}/.envrc`);
      const ended = await pollUntil(screen, (r) => r.alive === false, 5_000).catch(() => null);
      assert.ok(ended !== null, "the PTY's program was ended once its placeholder went");
      await agent.request("pty.close", { pty_id: opened.pty_id });
    }),
);

hostTest(
  "a protected name made a symlink protects its target: what the link leads to cannot be written from the next exec on",
  NEEDS_TIER_B,
  async () => {
    await world(coder(), async (proj) => {
      await Deno.mkdir(`${proj}/${DEEP}`, { recursive: true });
    }, async ({ proj, sh }) => {
      await sh(
        `echo ok > notes.txt && ln -s ../../../notes.txt ${DEEP}/.envrc && ` +
          `ln -s plan.sh ${DEEP}/.zshrc`,
      );
      await sh(
        [
          "(echo evil > notes.txt) 2>/dev/null",
          `(echo evil > ${DEEP}/.envrc) 2>/dev/null`,
          `(echo evil > ${DEEP}/plan.sh) 2>/dev/null`,
          `(mv ${DEEP.split("/")[0]} moved) 2>/dev/null`,
        ].join("\n"),
      );
      assert.equal(read(`${proj}/notes.txt`), "ok\n", "the link's target is read-only");
      assert.notEqual(read(`${proj}/${DEEP}/plan.sh`), "evil\n", "a dangling link's target too");
      assert.equal(read(`${proj}/${DEEP}/.envrc`), "<link>", "the link's directories are pinned");
    });
  },
);

hostTest(
  "a protected name made a symlink into a protected directory (sub/.envrc -> ../.claude/hooks/none) leaves the rest of that directory read-only: the directories on the way to its target are not bound writable inside it",
  NEEDS_TIER_B,
  async () => {
    await world(coder(), async (proj) => {
      // the human's Claude Code hook script, which their .claude/settings.json runs
      await Deno.mkdir(`${proj}/.claude/hooks`, { recursive: true });
      await Deno.writeTextFile(`${proj}/.claude/hooks/format.sh`, "orig");
      await Deno.mkdir(`${proj}/sub`);
    }, async ({ proj, sh }) => {
      await sh("ln -s ../.claude/hooks/none sub/.envrc");
      await sh(
        [
          "(echo evil > .claude/hooks/format.sh) 2>/dev/null",
          "(echo evil > .claude/hooks/lint.sh) 2>/dev/null",
        ].join("\n"),
      );
      assert.equal(read(`${proj}/.claude/hooks/format.sh`), "orig");
      assert.equal(read(`${proj}/.claude/hooks/lint.sh`), null, "nothing new in .claude/hooks");
    });
  },
);

hostTest(
  "a .git that is a symlink to a git directory protects that directory's hooks and config from the next exec on, as git runs them through the link",
  NEEDS_TIER_B,
  async () => {
    await world(coder(), async (proj) => {
      await Deno.mkdir(`${proj}/sub`);
    }, async ({ proj, sh }) => {
      await sh(
        "git init -q tmp && mv tmp/.git gd && rmdir tmp && ln -s ../gd sub/.git && " +
          "git init -q top && mv top/.git td && rmdir top && ln -s td .git",
      );
      await sh(
        [
          "(echo evil > gd/hooks/pre-commit) 2>/dev/null",
          "(echo evil >> gd/config) 2>/dev/null",
          "(echo evil > td/hooks/pre-commit) 2>/dev/null",
          "(mv gd gd2) 2>/dev/null",
        ].join("\n"),
      );
      assert.equal(read(`${proj}/gd/hooks/pre-commit`), null);
      assert.ok(!read(`${proj}/gd/config`)!.includes("evil"));
      assert.equal(read(`${proj}/td/hooks/pre-commit`), null, "the root's .git too");
      assert.equal(read(`${proj}/gd2`), null, "the git directory is pinned");
    });
  },
);

hostTest(
  "a protected name made a symlink to its write root (sub/.vscode -> ..) protects that root as it protects any other target: VS Code opening sub would read the agent's tasks.json at the root",
  NEEDS_TIER_B,
  async () => {
    await world(coder(), async (proj) => {
      await Deno.mkdir(`${proj}/sub`);
    }, async ({ proj, sh }) => {
      await sh("ln -s .. sub/.vscode");
      await sh("(echo evil > tasks.json) 2>/dev/null");
      assert.equal(read(`${proj}/sub/.vscode/tasks.json`), null);
    });
  },
);

hostTest(
  "a nested repository whose core.hooksPath names the write root (..) keeps that root read-only: the human's git commit in it would run the agent's pre-commit at the root",
  NEEDS_TIER_B,
  async () => {
    await world(coder(), async () => {}, async ({ proj, sh }) => {
      await sh("git init -q sub && git -C sub config core.hooksPath ..");
      await sh(
        "(printf '#!/bin/sh\\necho evil\\n' > pre-commit && chmod +x pre-commit) 2>/dev/null",
      );
      assert.equal(read(`${proj}/pre-commit`), null);
    });
  },
);

hostTest(
  "a git config's include.path and core.hooksPath under ~ (git expands it to HOME, which holds the project) are protected where git finds them, the human's global config's as a nested repository's: the human's git would read the agent's config or run its hook",
  NEEDS_TIER_B,
  async () => {
    await world(coder(), async (proj) => {
      // the human's own: a repository, and a global config that includes a file of the project
      await hostGit(proj, "init", "-q");
      await Deno.writeTextFile(`${proj}/../.gitconfig`, "[include]\n\tpath = ~/proj/local.cfg\n");
    }, async ({ proj, sh }) => {
      await sh("(printf '[core]\\n\\tpager = evil\\n' > local.cfg) 2>/dev/null");
      assert.equal(read(`${proj}/local.cfg`), "", "held by an empty file, read-only");
      await sh(
        "git init -q a && git -C a config include.path '~/proj/inc.cfg' && " +
          "git init -q b && git -C b config core.hooksPath '~/proj/hooks' && mkdir hooks",
      );
      await sh(
        [
          "(printf '[core]\\n\\tfsmonitor = evil\\n' > inc.cfg) 2>/dev/null",
          "(echo evil > hooks/pre-commit) 2>/dev/null",
        ].join("\n"),
      );
      const written = [read(`${proj}/inc.cfg`), read(`${proj}/hooks/pre-commit`)];
      assert.deepEqual(written, ["", null]);
    });
  },
);

hostTest(
  "the human's linked worktree stays protected when the agent floods .git/worktrees with thousands of directories: its commondir cannot be pointed elsewhere, so the human's git in that worktree runs none of the agent's code",
  NEEDS_TIER_B,
  async () => {
    await world(coder(), async (proj) => {
      await hostGit(proj, "init", "-q");
      await hostGit(proj, "commit", "-q", "--allow-empty", "-m", "x");
      await hostGit(proj, "worktree", "add", "-q", `${proj}/../wt`);
    }, async ({ proj, sh }) => {
      await sh("seq 5000 | sed 's|^|.git/worktrees/zz|' | xargs mkdir");
      await sh("(echo /tmp > .git/worktrees/wt/commondir) 2>/dev/null");
      assert.notEqual(read(`${proj}/.git/worktrees/wt/commondir`), "/tmp\n");
    });
  },
);

hostTest(
  "the human's submodule repository stays protected when the agent floods .git/modules with thousands of directories, also when its work tree lies deeper than the scan looks",
  NEEDS_TIER_B,
  async () => {
    await world(coder(), async (proj) => {
      const lib = `${proj}/../lib-src`;
      await hostGit(proj, "init", "-q", lib);
      await hostGit(lib, "commit", "-q", "--allow-empty", "-m", "lib");
      await hostGit(proj, "init", "-q");
      await hostGit(proj, "submodule", "add", "-q", lib, "a/b/c/d/e/lib");
      await hostGit(proj, "commit", "-qm", "with lib");
    }, async ({ proj, sh }) => {
      await sh("seq 5000 | sed 's|^|.git/modules/zz|' | xargs mkdir");
      await sh("(git config -f .git/modules/a/b/c/d/e/lib/config core.fsmonitor evil) 2>/dev/null");
      const config = read(`${proj}/.git/modules/a/b/c/d/e/lib/config`)!;
      assert.ok(!config.includes("fsmonitor"), config);
    });
  },
);

hostTest(
  "a bare repository in the project (the human's backup.git, pushed to) keeps its hooks and config read-only: the human's git push into it would run the agent's post-receive",
  NEEDS_TIER_B,
  async () => {
    await world(coder(), async (proj) => {
      await hostGit(proj, "init", "-q", "--bare", "backup.git");
    }, async ({ proj, sh }) => {
      await sh(
        [
          "(printf '#!/bin/sh\\necho evil\\n' > backup.git/hooks/post-receive) 2>/dev/null",
          "(printf '[core]\\n\\thooksPath = /tmp\\n' >> backup.git/config) 2>/dev/null",
        ].join("\n"),
      );
      assert.equal(read(`${proj}/backup.git/hooks/post-receive`), null);
      assert.ok(!read(`${proj}/backup.git/config`)!.includes("hooksPath"));
    });
  },
);

Deno.test({
  name:
    "P-SBX-6 a protected name that is a symlink when an exec starts cannot be replaced by that exec (rm sub/.envrc; echo evil > sub/.envrc) [ignored: defect found by the probe round; needs a SPEC decision: P-SBX-6 makes every protected name that exists at exec start read-only, but a mount cannot be placed on a symlink, so the kernel protects the link's target and pins its directories while the link itself can be unlinked and made anew; holding it would mean refusing runs while a protected name below a root is a symlink (as protected_hardlink does), which a human's own .vscode -> ../shared link would then stop]",
  ignore: true,
  fn: async () => {
    await world(coder(), async (proj) => {
      await Deno.mkdir(`${proj}/${DEEP}`, { recursive: true });
      await Deno.writeTextFile(`${proj}/notes.txt`, "ok\n");
      await Deno.symlink("../../../notes.txt", `${proj}/${DEEP}/.envrc`);
    }, async ({ proj, sh }) => {
      await sh(`(rm -f ${DEEP}/.envrc && echo evil > ${DEEP}/.envrc) 2>/dev/null`);
      assert.equal(read(`${proj}/${DEEP}/.envrc`), "<link>", "the human's link is left");
    });
  },
});

Deno.test({
  name:
    "P-SBX-6 a repository an exec makes next to a flood of 10,001 files is protected from the next exec on, as any other [ignored: defect found by the probe round; needs a SPEC decision: the scan reads at most 10,000 directory entries per root (README), so one exec that makes that many files and runs git init in a subdirectory leaves that repository's hooks and config writable in every later exec; P-SBX-6 says every one that exists at exec start, with no limit, and reading every entry of a tree an agent can flood costs every exec without bound]",
  ignore: true,
  fn: async () => {
    await world(coder(), async () => {}, async ({ proj, sh }) => {
      await sh("seq 10001 | xargs touch && git init -q sub");
      await sh("(echo evil > sub/.git/hooks/pre-commit) 2>/dev/null");
      assert.equal(read(`${proj}/sub/.git/hooks/pre-commit`), null);
    });
  },
});

Deno.test({
  name:
    "P-SBX-6 the human's nested repository stays protected after a kernel restart when the agent has flooded the project root with 10,001 files [ignored: defect found by the probe round; needs a SPEC decision: what earlier scans found is kept in the kernel's memory only, and the scan reads at most 10,000 entries per root (README), so once a kernel starts on a flooded project no scan reaches sub/.git and its hooks are writable; P-SBX-6 says every one that exists at exec start, with no limit]",
  ignore: true,
  fn: async () => {
    await world(coder(), async (proj) => {
      await hostGit(proj, "init", "-q", "sub");
    }, async ({ k, proj, token, sh }) => {
      await sh("seq 10001 | xargs touch");
      await k.stop(); // a reboot, an upgrade
      const k2 = await startKernel(
        ["--policy", await writePolicy(k.box, { "agent:c": coder() })],
        k.box,
      );
      try {
        const human = await k2.attach("work");
        await exec(human, `cd ${proj}`);
        const agent = await k2.attach("work", token);
        const script = `${proj}/../scripts/restart.sh`;
        await Deno.writeTextFile(script, "(echo evil > sub/.git/hooks/pre-commit) 2>/dev/null\n");
        await exec(agent, `sh ${script}`);
        assert.equal(read(`${proj}/sub/.git/hooks/pre-commit`), null);
      } finally {
        await k2.stop();
      }
    });
  },
});

Deno.test({
  name:
    "P-SBX-6 a task the agent started before the human cloned a repository into the project cannot write that repository's hooks [ignored: defect found by the probe round; needs a SPEC decision: P-SBX-6 protects the names that exist when an exec starts, and a sandbox's binds are fixed when it starts (a task's resident lives as long as the task), so a long-running task writes the hooks of a repository the human makes (git clone, git init) while it runs; protecting them would mean binding new names into a running sandbox, or ending it]",
  ignore: true,
  fn: async () => {
    await world(coder(), async () => {}, async ({ agent, proj }) => {
      // from a file the static layer does not read, as world's sh runs one
      const watcher = `${proj}/../scripts/watcher.sh`;
      await Deno.writeTextFile(
        watcher,
        "while :; do [ -d sub/.git/hooks ] && echo evil > sub/.git/hooks/post-checkout" +
          " && break; sleep 0.1; done 2>/dev/null\n",
      );
      const task = await agent.request("exec", { src: `sh ${watcher}`, async: true }) as Rec;
      await hostGit(proj, "init", "-q", "sub");
      await waitUntil(() => read(`${proj}/sub/.git/hooks/post-checkout`) !== null, 3000);
      assert.equal(read(`${proj}/sub/.git/hooks/post-checkout`), null);
      await agent.request("task.cancel", { task: task.task }).catch(() => {});
    });
  },
});

hostTest(
  "a protected file with a second name (a hard link) refuses the next exec (-32010 protected_hardlink) instead of staying writable through that name",
  NEEDS_TIER_B,
  async () => {
    await world(coder(), async (proj) => {
      await Deno.mkdir(`${proj}/${DEEP}`, { recursive: true });
    }, async ({ proj, agent, sh }) => {
      await sh(`echo ok > notes.txt && ln notes.txt ${DEEP}/.envrc`);
      const refused = await rpcError(exec(agent, "echo evil > notes.txt"));
      assert.equal(refused.code, -32010);
      assert.equal((refused.data as Rec).reason, "protected_hardlink");
      assert.deepEqual((refused.data as Rec).paths, [`${proj}/${DEEP}/.envrc`]);
      assert.equal(read(`${proj}/notes.txt`), "ok\n");
      await Deno.remove(`${proj}/notes.txt`); // the human removes the other name
      await sh("echo fine > other.txt");
      assert.equal(read(`${proj}/other.txt`), "fine\n");
    });
  },
);

hostTest(
  "an agent that fills its project with more directories than the protection scan reads is refused its next exec (-32010 protection_scan_limit), not run with what the scan left unread writable; once they are gone it runs again",
  NEEDS_TIER_B,
  async () => {
    await world(coder(), async () => {}, async ({ proj, agent, sh }) => {
      await sh(`mkdir many && cd many && seq 1 ${SCAN_DIR_LIMIT} | xargs mkdir`);
      const refused = await rpcError(exec(agent, "echo evil > notes.txt"));
      assert.equal(refused.code, -32010);
      assert.equal((refused.data as Rec).reason, "protection_scan_limit");
      assert.deepEqual((refused.data as Rec).paths, [proj]);
      assert.equal(read(`${proj}/notes.txt`), null);
      // the human removes them (rm -rf: Deno.remove takes some 20 s for 100,000 directories)
      await new Deno.Command("rm", { args: ["-rf", `${proj}/many`] }).output();
      await sh("echo fine > notes.txt");
      assert.equal(read(`${proj}/notes.txt`), "fine\n");
    });
  },
);

hostTest(
  "an agent that hides a repository in a directory whose name is not UTF-8 is refused its next exec (-32010 protection_scan_name), not run with that repository's config writable: the scan passed over it, and the agent could write a core.fsmonitor the human's git status there runs",
  NEEDS_TIER_B,
  async () => {
    await world(coder(), async () => {}, async ({ proj, sh }) => {
      await sh(`d="$(printf 'x\\377')" && mkdir "$d" && git init -q "$d/lib"`);
      // from a file the static layer does not read: only the sandbox stands in its way
      const refused = await rpcError(
        sh(`printf '[core]\\n\\tfsmonitor = touch PWNED\\n' >> x*/lib/.git/config`),
      );
      assert.equal(refused.code, -32010);
      assert.equal((refused.data as Rec).reason, "protection_scan_name");
      assert.deepEqual((refused.data as Rec).paths, [proj]);
      const config = await new Deno.Command("sh", {
        args: ["-c", "cat x*/lib/.git/config"],
        cwd: proj,
      })
        .output();
      assert.equal(config.code, 0);
      assert.doesNotMatch(new TextDecoder().decode(config.stdout), /PWNED/);
    });
  },
);

hostTest(
  "a directory at a protected file's name is no hard link: its subdirectories' links refuse nothing",
  NEEDS_TIER_B,
  async () => {
    await world(coder(), async () => {}, async ({ proj, agent, sh }) => {
      // a leftover placeholder, or the user's own: .git/config as a directory (nlink 3)
      await sh("mkdir -p .git/config/sub .envrc/sub");
      const ran = (await exec(agent, "echo fine > notes.txt", { position: "value" })).value as Rec;
      assert.equal(ran.ok, true, JSON.stringify(ran));
      assert.equal(read(`${proj}/notes.txt`), "fine\n");
    });
  },
);

hostTest(
  "a .git made by a run at the root gets no placeholders while that run goes on: git init can write its config",
  NEEDS_TIER_B,
  async () => {
    await world(coder(), async () => {}, async ({ k, proj, agent, token }) => {
      const run = exec(
        agent,
        "mkdir .git && sleep 2 && ls -A .git | wc -l && git init -q && test -f .git/config && echo ok",
        { position: "value" },
      );
      assert.ok(
        await waitUntil(() => read(`${proj}/.git`) === "<dir>", 10000),
        "the run made .git",
      );
      // an attach prepares the session's next shell for the view it sees now, with this .git
      const other = await k.attach("work", token);
      const out = await run;
      assert.equal(String(((out.value as Rec).out as Rec).v), "0\nok\n");
      other.close();
    });
  },
);

hostTest(
  "placeholders a SIGKILLed kernel left are removed by the next kernel on its state directory; one the user filled or replaced stays",
  NEEDS_TIER_B,
  async () => {
    await world(coder(), async (proj) => {
      await Deno.mkdir(`${proj}/.git`);
    }, async ({ k, proj, sh }) => {
      assert.equal((await sh("echo up")).trim(), "up");
      const made = [...PROTECTED_FILES, ...PROTECTED_DIRS, ".git/hooks", ".git/config"];
      for (const name of made) assert.equal(read(`${proj}/${name}`), "<dir>", name);
      assert.equal(read(`${proj}/.git/commondir`), ".\n", "a file placeholder");
      assert.equal(read(`${proj}/.git/config.worktree`), "");
      Deno.kill(kernelPid(k.socket), "SIGKILL");
      assert.equal((await k.child.status).signal, "SIGKILL");
      assert.equal(read(`${proj}/.envrc`), "<dir>", "the killed kernel left its placeholders");
      // the user fills one and replaces another (ext4 gives the new one the old inode)
      await Deno.writeTextFile(`${proj}/.claude/settings.json`, "mine");
      await Deno.remove(`${proj}/.idea`);
      await Deno.mkdir(`${proj}/.idea`, { mode: 0o555 });
      await Deno.chmod(`${proj}/.git/config.worktree`, 0o644);
      await Deno.writeTextFile(`${proj}/.git/config.worktree`, "[core]\n");
      const policy = await writePolicy(k.box, { "agent:c": coder() });
      const k2 = await startKernel(["--policy", policy], k.box);
      try {
        assert.deepEqual(tree(proj), [
          ".claude",
          ".claude/settings.json",
          ".git",
          ".git/config.worktree",
          ".idea",
        ]);
        assert.equal(read(`${proj}/.git/config.worktree`), "[core]\n");
        assert.equal(read(`${proj}/.claude/settings.json`), "mine");
        const records = `${k.box.dir}/state/shoal/placeholders`;
        const [own, ...others] = [...Deno.readDirSync(records)].map((e) => e.name);
        assert.deepEqual(others, [], "the killed kernel's records are gone");
        assert.match(own, new RegExp(`^${kernelPid(k2.socket)}-`), "the new kernel's own");
        assert.deepEqual([...Deno.readDirSync(`${records}/${own}`)], []);
      } finally {
        await k2.stop();
      }
    });
  },
);

/** Makes the FIFO `gate` in the project that {@link gitInitBehindGate}'s run waits on. */
async function makeGate(proj: string): Promise<void> {
  assert.equal((await new Deno.Command("mkfifo", { args: [`${proj}/gate`] }).output()).code, 0);
}

/**
 * Starts a run of `agent` that makes `.git` at the project's root (writing `made` then), waits
 * until the test writes a line to the FIFO `gate` ({@link makeGate}) and then runs `git init`;
 * `run` resolves to its stdout: `ok` when git init could write its config.
 */
async function gitInitBehindGate(
  agent: RpcConnection,
  proj: string,
): Promise<{ run: Promise<string> }> {
  const run = exec(
    agent,
    "mkdir .git && echo > made && read x < gate && git init -q && test -f .git/config && echo ok",
    { position: "value" },
  ).then((out) => String(((out.value as Rec).out as Rec).v));
  run.catch(() => {}); // awaited by the caller, unless an assertion fails first
  assert.ok(await waitUntil(() => read(`${proj}/made`) !== null, 10000), "the run made .git");
  return { run };
}

hostTest(
  "a sandbox whose placeholders would land where a run going on writes waits for that run: git init in a run, another exec meanwhile",
  NEEDS_TIER_B,
  async () => {
    await world(coder(), makeGate, async ({ k, proj, agent, sh }) => {
      const init = (await gitInitBehindGate(agent, proj)).run;
      // a new view (.git without hooks and config): its sandbox would make placeholders there
      const other = sh("(echo evil > .git/hooks/pre-commit) 2>/dev/null; echo other");
      other.catch(() => {}); // awaited below, unless an assertion fails first
      const waits = () => k.stderr.some((line) => line.includes("waits for runs that may write"));
      assert.ok(
        await waitUntil(() => waits() || read(`${proj}/.git/hooks`) !== null, 10000),
        "the other exec's sandbox is starting",
      );
      await Deno.writeTextFile(`${proj}/gate`, "go\n");
      assert.equal(await init, "ok\n", "git init wrote its config");
      assert.equal(await other, "other\n");
      assert.equal(read(`${proj}/.git/hooks/pre-commit`), null, "hooks are protected");
      assert.ok(read(`${proj}/.git/config`)!.includes("[core]"));
    });
  },
);

hostTest(
  "a sandbox whose placeholders would land where a run still writes after the wait is refused: -32010 sandbox_busy naming the paths",
  NEEDS_TIER_B,
  async () => {
    await world(coder(), makeGate, async ({ proj, agent }) => {
      const init = (await gitInitBehindGate(agent, proj)).run;
      const refused = await rpcError(exec(agent, "echo other"));
      assert.equal(refused.code, -32010);
      assert.equal((refused.data as Rec).reason, "sandbox_busy");
      assert.deepEqual(
        ((refused.data as Rec).paths as string[]).sort(),
        [`${proj}/.git/config`, `${proj}/.git/hooks`],
      );
      assert.equal(read(`${proj}/.git/hooks`), null, "no placeholder was made");
      await Deno.writeTextFile(`${proj}/gate`, "go\n");
      assert.equal(await init, "ok\n");
      const after = await exec(agent, "echo again", { position: "value" });
      assert.equal(String(((after.value as Rec).out as Rec).v), "again\n");
    });
  },
);

hostTest(
  "a PTY's sandbox waits too before making placeholders where a run going on writes",
  NEEDS_TIER_B,
  async () => {
    await world(coder(), makeGate, async ({ k, proj, agent, token }) => {
      const init = (await gitInitBehindGate(agent, proj)).run;
      const conn = await k.attach("work", token);
      const opening = conn.request("pty.open", { cmd: "sleep", args: ["30"] }) as Promise<Rec>;
      opening.catch(() => {}); // awaited below, unless an assertion fails first
      const waits = () => k.stderr.some((line) => line.includes("waits for runs that may write"));
      assert.ok(
        await waitUntil(() => waits() || read(`${proj}/.git/hooks`) !== null, 10000),
        "the PTY's sandbox is starting",
      );
      await Deno.writeTextFile(`${proj}/gate`, "go\n");
      assert.equal(await init, "ok\n", "git init wrote its config");
      const opened = await opening;
      await conn.request("pty.close", { pty_id: opened.pty_id });
    });
  },
);

hostTest(
  "a kernel started on a state directory that a running kernel shares leaves that kernel's placeholders alone",
  NEEDS_TIER_B,
  async () => {
    await world(coder(), async () => {}, async ({ k, proj, agent }) => {
      const task = await agent.request("exec", { src: "sleep 60", async: true }) as Rec;
      assert.equal(read(`${proj}/.envrc`), "<dir>", "held while the task's sandbox lives");
      const socket = k.box.socket("other");
      const policy = await writePolicy(k.box, { "agent:c": coder() });
      const k2 = await launchKernel(k.box, ["--socket", socket, "--policy", policy], socket);
      try {
        assert.equal(read(`${proj}/.envrc`), "<dir>", "still held: its kernel runs");
      } finally {
        await k2.stop();
      }
      await agent.request("task.cancel", { task: task.task });
    });
  },
);

hostTest(
  "a placeholder that another kernel's sandbox binds outlives its own kernel: the name stays read-only in there, and a later kernel removes it",
  NEEDS_TIER_B,
  async () => {
    await world(coder(), async () => {}, async ({ k, proj, agent, token }) => {
      await agent.request("exec", { src: "sleep 60", async: true });
      assert.equal(read(`${proj}/.envrc`), "<dir>", "the first kernel's placeholder");
      const socket = k.box.socket("other");
      const policy = await writePolicy(k.box, { "agent:c": coder() });
      const k2 = await launchKernel(k.box, ["--socket", socket, "--policy", policy], socket);
      try {
        const human = await k2.attach("two");
        await exec(human, `cd ${proj}`);
        const agent2 = await k2.attach("two", token);
        // the second kernel's sandbox binds .envrc as it finds it: an existing directory
        const second = await agent2.request("exec", { src: "sleep 60", async: true }) as Rec;
        await k.stop(); // its sandboxes end, and it drops what it held
        assert.equal(read(`${proj}/.envrc`), "<dir>", "left to the sandbox that binds it");
        const script = `${k.box.dir}/home/scripts/w.sh`;
        await Deno.writeTextFile(script, "(echo evil > .envrc) 2>/dev/null; echo done\n");
        const out = await exec(agent2, `sh ${script}`, { position: "value" });
        assert.equal(String(((out.value as Rec).out as Rec).v), "done\n");
        assert.equal(read(`${proj}/.envrc`), "<dir>", "still read-only in the second sandbox");
        await agent2.request("task.cancel", { task: second.task });
      } finally {
        await k2.stop();
      }
      const k3 = await startKernel(["--policy", policy], k.box);
      await k3.stop();
      assert.equal(read(`${proj}/.envrc`), null, "removed once nothing binds it");
    });
  },
);

hostTest(
  "a submodule's repository (.git/modules/NAME) keeps its hooks and config read-only, so the human's git status runs none of the agent's code; the static layer asks approval",
  NEEDS_TIER_B,
  async () => {
    const marker = `${Deno.makeTempDirSync()}/ran-as-human`;
    await world(coder(), async (proj) => {
      const lib = `${proj}/../lib-src`;
      await hostGit(proj, "init", "-q", lib);
      await hostGit(lib, "commit", "-q", "--allow-empty", "-m", "lib");
      await hostGit(proj, "init", "-q");
      await hostGit(proj, "submodule", "add", "-q", lib, "vendor/lib");
      await hostGit(proj, "commit", "-qm", "with lib");
    }, async ({ proj, agent, sh }) => {
      const modules = `${proj}/.git/modules/vendor/lib`;
      assert.ok(read(`${modules}/config`)!.includes("[core]"), "the submodule's repository");
      await sh(
        [
          `(git config -f .git/modules/vendor/lib/config core.fsmonitor 'touch ${marker}; false') 2>/dev/null`,
          `(printf '#!/bin/sh\\ntouch ${marker}\\n' > .git/modules/vendor/lib/hooks/post-checkout) 2>/dev/null`,
          "(mv .git/modules/vendor/lib .git/modules/vendor/old) 2>/dev/null",
        ].join("\n"),
      );
      assert.ok(!read(`${modules}/config`)!.includes("fsmonitor"), read(`${modules}/config`)!);
      assert.equal(read(`${modules}/hooks/post-checkout`), null);
      assert.equal(read(`${proj}/.git/modules/vendor/old`), null, "its directories are pinned");
      await hostGit(proj, "status");
      assert.equal(read(marker), null, "the agent's code ran in the human's git status");
      const asked = await rpcError(
        exec(agent, "echo '[core]' >> .git/modules/vendor/lib/config"),
      );
      assert.equal(asked.code, -32011);
    });
    Deno.removeSync(marker.slice(0, marker.lastIndexOf("/")), { recursive: true });
  },
);

/**
 * What husky 9 (`npx husky init`) writes: core.hooksPath `.husky/_`, whose hooks all source
 * `.husky/_/h`, which runs the script of the hook's name in `.husky/` itself (husky's `h`, cut
 * to what runs the script).
 */
async function huskyNine(proj: string): Promise<void> {
  await hostGit(proj, "config", "core.hooksPath", ".husky/_");
  await Deno.mkdir(`${proj}/.husky/_`, { recursive: true });
  await Deno.writeTextFile(`${proj}/.husky/_/.gitignore`, "*");
  await Deno.writeTextFile(
    `${proj}/.husky/_/h`,
    '#!/usr/bin/env sh\nn=$(basename "$0")\ns=$(dirname "$(dirname "$0")")/$n\n' +
      '[ ! -f "$s" ] && exit 0\nexport PATH="node_modules/.bin:$PATH"\nsh -e "$s" "$@"\n',
  );
  for (const hook of ["pre-commit", "post-commit", "post-checkout", "post-merge"]) {
    await Deno.writeTextFile(
      `${proj}/.husky/_/${hook}`,
      '#!/usr/bin/env sh\n. "$(dirname "$0")/h"',
    );
    await Deno.chmod(`${proj}/.husky/_/${hook}`, 0o755);
  }
  await Deno.writeTextFile(`${proj}/.husky/pre-commit`, "echo lint\n");
}

hostTest(
  "husky 9's hooks (core.hooksPath .husky/_, which runs the scripts in .husky/) are read-only: the agent cannot add or change the script the human's git commit runs",
  NEEDS_TIER_B,
  async () => {
    const marker = `${Deno.makeTempDirSync()}/ran-as-human`;
    await world(coder(), async (proj) => {
      await hostGit(proj, "init", "-q");
      await huskyNine(proj);
    }, async ({ proj, sh }) => {
      await sh(
        [
          `(echo 'touch ${marker}' > .husky/pre-commit) 2>/dev/null`,
          `(echo 'touch ${marker}' > .husky/post-commit) 2>/dev/null`,
          "(mv .husky/pre-commit .husky/old) 2>/dev/null",
        ].join("\n"),
      );
      assert.equal(read(`${proj}/.husky/pre-commit`), "echo lint\n");
      assert.equal(read(`${proj}/.husky/post-commit`), null);
      await hostGit(proj, "commit", "-q", "--allow-empty", "-m", "x");
      assert.equal(read(marker), null, "the agent's hook script ran in the human's git commit");
      // Ordinary work is unaffected.
      assert.equal((await sh("echo a > a && git add a && echo added")).trim(), "added");
    });
    Deno.removeSync(marker.slice(0, marker.lastIndexOf("/")), { recursive: true });
  },
);

hostTest(
  "the hooks directory a repository's core.hooksPath names (husky's .husky, one not made yet) is read-only like .git/hooks, so the human's git commit runs none of the agent's code",
  NEEDS_TIER_B,
  async () => {
    const marker = `${Deno.makeTempDirSync()}/ran-as-human`;
    const evil = `printf '#!/bin/sh\\ntouch ${marker}\\n'`;
    await world(coder(), async (proj) => {
      await hostGit(proj, "init", "-q");
      await hostGit(proj, "config", "core.hooksPath", ".husky");
      await Deno.mkdir(`${proj}/.husky`);
      await Deno.writeTextFile(`${proj}/.husky/pre-commit`, "#!/bin/sh\necho lint\n");
      await Deno.chmod(`${proj}/.husky/pre-commit`, 0o755);
      await hostGit(proj, "init", "-q", "sub");
      // as a human would write it by hand: quoted, with a comment
      await Deno.writeTextFile(
        `${proj}/sub/.git/config`,
        '[Core]\n\thooksPath = "../hooks dir" # ours\n',
        {
          append: true,
        },
      );
    }, async ({ proj, sh }) => {
      await sh(
        [
          `(${evil} > .husky/pre-commit) 2>/dev/null`,
          `(${evil} > .husky/post-commit; chmod +x .husky/post-commit) 2>/dev/null`,
          "(mv .husky .husky.old && mkdir .husky) 2>/dev/null",
          `(mkdir -p 'hooks dir' && ${evil} > 'hooks dir/pre-commit') 2>/dev/null`,
          `(chmod +x 'hooks dir/pre-commit') 2>/dev/null`,
        ].join("\n"),
      );
      assert.equal(read(`${proj}/.husky/pre-commit`), "#!/bin/sh\necho lint\n");
      assert.equal(read(`${proj}/.husky/post-commit`), null);
      assert.equal(read(`${proj}/hooks dir/pre-commit`), null);
      await hostGit(proj, "commit", "-q", "--allow-empty", "-m", "x");
      await hostGit(`${proj}/sub`, "commit", "-q", "--allow-empty", "-m", "x");
      assert.equal(read(marker), null, "the agent's hook ran in the human's git commit");
      // Ordinary work is unaffected.
      assert.equal((await sh("echo a > a && git add a && echo added")).trim(), "added");
    });
    Deno.removeSync(marker.slice(0, marker.lastIndexOf("/")), { recursive: true });
  },
);

hostTest(
  "a file a repository's config includes (include.path, includeIf, one in it, one not made yet) is read-only like .git/config, so the human's git status runs none of the agent's code, and git works alike with the empty file that holds the missing one",
  NEEDS_TIER_B,
  async () => {
    const marker = `${Deno.makeTempDirSync()}/ran-as-human`;
    const evil = `printf '[core]\\n\\tfsmonitor = touch ${marker}; false\\n'`;
    await world(coder(), async (proj) => {
      await hostGit(proj, "init", "-q");
      await hostGit(proj, "config", "include.path", "../shared.gitconfig");
      await hostGit(proj, "config", `includeIf.gitdir:${proj}/.path`, "../local.gitconfig");
      await Deno.writeTextFile(`${proj}/shared.gitconfig`, "[include]\n\tpath = conf/more.inc\n");
      await Deno.mkdir(`${proj}/conf`);
      await Deno.writeTextFile(`${proj}/conf/more.inc`, "[user]\n\tname = me\n");
    }, async ({ proj, sh }) => {
      const wrote = await sh(
        [
          "st() { git status --short >/dev/null 2>&1 && echo ok || echo failed; }",
          "echo in-sandbox=$(st)",
          `(${evil} >> shared.gitconfig) 2>/dev/null || echo shared-refused`,
          `(${evil} > conf/more.inc) 2>/dev/null || echo more-refused`,
          `(${evil} > local.gitconfig) 2>/dev/null || echo local-refused`,
          "(mv conf conf.old && mkdir conf) 2>/dev/null || echo rename-refused",
        ].join("\n"),
      );
      assert.deepEqual(wrote.trim().split("\n"), [
        "in-sandbox=ok",
        "shared-refused",
        "more-refused",
        "local-refused",
        "rename-refused",
      ]);
      assert.equal(read(`${proj}/local.gitconfig`), "", "held by an empty file while it lives");
      const status = await new Deno.Command("git", { args: ["status", "--short"], cwd: proj })
        .output();
      assert.ok(status.success, new TextDecoder().decode(status.stderr));
      assert.equal(read(marker), null, "the agent's config ran in the human's git status");
    });
    Deno.removeSync(marker.slice(0, marker.lastIndexOf("/")), { recursive: true });
  },
);

/**
 * Everyday git in a repository at the root, as `who` (a linked worktree of that name is added and
 * removed), run with sh in the project: each step prints what it shows, so that the agent's run in
 * the sandbox and the human's on the host, with the placeholders of `.git/commondir` and
 * `.git/config.worktree` there, can be told to behave alike.
 */
function gitWorkflow(who: string): string {
  return [
    "set -e",
    "export GIT_AUTHOR_NAME=a GIT_AUTHOR_EMAIL=a@x GIT_COMMITTER_NAME=a GIT_COMMITTER_EMAIL=a@x",
    "echo commondir=$(cat .git/commondir)",
    "echo more >> f; echo status=$(git status --short f)",
    "echo diff=$(git diff --numstat f)",
    "git add f; git commit -qm two",
    `git branch side-${who}; git stash list`,
    "echo stashed >> f; git stash -q; git stash pop -q; git commit -qam three",
    `git checkout -q side-${who}; echo ${who} > ${who}; git add ${who}; git commit -qm ${who}`,
    `git rebase -q main; git checkout -q main; git merge -q --ff-only side-${who}`,
    "echo log=$(git log --oneline | wc -l)",
    `git worktree add -q wt-${who} -b wt-${who}`,
    "echo worktrees=$(git worktree list --porcelain | grep -c '^worktree ')",
    `(cd wt-${who} && echo z > z && git add z && git commit -qm z && ` +
    "echo linked=$(git rev-parse --git-common-dir))",
    `git worktree remove wt-${who}`,
    "echo worktrees=$(git worktree list --porcelain | grep -c '^worktree ')",
    "git gc -q",
    "echo dirs=$(git rev-parse --git-dir --git-common-dir --show-toplevel)",
    "echo submodule=$(git submodule status | cut -c2-41)",
    "git fsck --no-dangling 2>&1 && echo fsck=ok",
  ].join("\n");
}

/** What {@link gitWorkflow} prints in `proj` with `log` commits after it and the submodule at `submodule`. */
function gitWorkflowShows(proj: string, log: number, submodule: string): string[] {
  return [
    "commondir=.",
    "status= M f",
    "diff=1 0 f",
    `log=${log}`,
    "worktrees=2",
    `linked=${proj}/.git`,
    "worktrees=1",
    `dirs=.git ${proj}/.git ${proj}`,
    `submodule=${submodule}`,
    "fsck=ok",
  ];
}

hostTest(
  "with .git/commondir and .git/config.worktree held by their placeholders, everyday git works alike for the agent in its sandbox and for the human on the host, and no placeholder is left after",
  NEEDS_TIER_B,
  async () => {
    let submodule = "";
    await world(coder(), async (proj) => {
      const lib = `${proj}/../lib-src`;
      await hostGit(proj, "init", "-q", "-b", "main");
      await Deno.writeTextFile(`${proj}/f`, "one\n");
      await hostGit(proj, "add", "f");
      await hostGit(proj, "commit", "-qm", "one");
      await hostGit(proj, "init", "-q", lib);
      await hostGit(lib, "commit", "-q", "--allow-empty", "-m", "lib");
      await hostGit(proj, "submodule", "add", "-q", lib, "vendor/lib");
      await hostGit(proj, "commit", "-qm", "with lib");
      const head = await new Deno.Command("git", { args: ["rev-parse", "HEAD"], cwd: lib })
        .output();
      submodule = new TextDecoder().decode(head.stdout).trim();
    }, async ({ proj, sh }) => {
      const agent = await sh(`${gitWorkflow("agent")} 2>&1`);
      assert.deepEqual(agent.trim().split("\n"), gitWorkflowShows(proj, 5, submodule));
      // the sandbox lives on: its placeholders are on the host too, read-only
      assert.equal(read(`${proj}/.git/commondir`), ".\n");
      assert.equal(read(`${proj}/.git/config.worktree`), "");
      const human = await new Deno.Command("sh", {
        args: ["-c", gitWorkflow("human")],
        cwd: proj,
        stdout: "piped",
        stderr: "piped",
      }).output();
      assert.deepEqual(
        new TextDecoder().decode(human.stdout).trim().split("\n"),
        gitWorkflowShows(proj, 8, submodule),
        new TextDecoder().decode(human.stderr),
      );
    }, (proj) => {
      assert.equal(read(`${proj}/.git/commondir`), null, "removed with the last sandbox");
      assert.equal(read(`${proj}/.git/config.worktree`), null);
    });
  },
);

hostTest(
  "the commondir of a linked worktree's git directory (.git/worktrees/ID) stays read-only, so the human's git in that worktree, outside the project, runs none of the agent's code",
  NEEDS_TIER_B,
  async () => {
    const marker = `${Deno.makeTempDirSync()}/ran-as-human`;
    await world(coder(), async (proj) => {
      await hostGit(proj, "init", "-q", "-b", "main");
      await hostGit(proj, "commit", "-q", "--allow-empty", "-m", "one");
      await hostGit(proj, "worktree", "add", "-q", `${proj}/../outside`);
      await hostGit(proj, "worktree", "add", "-q", "inside");
    }, async ({ proj, sh }) => {
      const evil = `git config -f evil/config core.fsmonitor 'touch ${marker}; false'`;
      const tried = await sh(
        [
          `cp -r .git evil && ${evil}`,
          "(echo ../../../evil > .git/worktrees/outside/commondir) 2>/dev/null",
          "(mv .git/worktrees/outside .git/worktrees/old) 2>/dev/null",
          "(git worktree remove inside) 2>/dev/null || echo kept",
          "git worktree add -q new && echo z > new/z && git -C new add z && echo added",
          "git worktree remove --force new && echo removed",
        ].join("\n"),
      );
      assert.equal(read(`${proj}/.git/worktrees/outside/commondir`), "../..\n");
      assert.equal(read(`${proj}/.git/worktrees/old`), null, "its directories are pinned");
      await hostGit(`${proj}/../outside`, "status");
      assert.equal(read(marker), null, "the agent's code ran in the human's git status");
      assert.equal(tried, "kept\nadded\nremoved\n");
    });
    Deno.removeSync(marker.slice(0, marker.lastIndexOf("/")), { recursive: true });
  },
);

hostTest(
  "a root repository's config.worktree, which git reads once extensions.worktreeConfig is set (git sparse-checkout sets it), cannot be written or created, so the human's git status runs none of the agent's code",
  NEEDS_TIER_B,
  async () => {
    const marker = `${Deno.makeTempDirSync()}/ran-as-human`;
    const evil = `[core]\\n\\tfsmonitor = touch ${marker}; false\\n`;
    for (const existing of [false, true]) {
      await world(coder(), async (proj) => {
        await hostGit(proj, "init", "-q");
        await hostGit(proj, "config", "extensions.worktreeConfig", "true");
        if (existing) await Deno.writeTextFile(`${proj}/.git/config.worktree`, "[user]\n");
      }, async ({ proj, sh }) => {
        await sh(
          [
            fileAttacks(".git/config.worktree"),
            `(printf '${evil}' > .git/config.worktree) 2>/dev/null`,
            `(printf '${evil}' > /tmp/w && mv -f /tmp/w .git/config.worktree) 2>/dev/null`,
          ].join("\n"),
        );
        assert.equal(read(`${proj}/.git/config.worktree`), existing ? "[user]\n" : "");
        await hostGit(proj, "status");
        assert.equal(read(marker), null, `the agent's code ran (existing: ${existing})`);
      });
    }
    Deno.removeSync(marker.slice(0, marker.lastIndexOf("/")), { recursive: true });
  },
);

hostTest(
  "below a root too, a repository's absent commondir cannot be created (a nested repository's, a submodule's in .git/modules), so the human's git there runs none of the agent's code",
  NEEDS_TIER_B,
  async () => {
    const marker = `${Deno.makeTempDirSync()}/ran-as-human`;
    await world(coder(), async (proj) => {
      const lib = `${proj}/../lib-src`;
      await hostGit(proj, "init", "-q");
      await hostGit(proj, "init", "-q", "nested/repo");
      await hostGit(`${proj}/nested/repo`, "commit", "-q", "--allow-empty", "-m", "n");
      await hostGit(proj, "init", "-q", lib);
      await hostGit(lib, "commit", "-q", "--allow-empty", "-m", "lib");
      await hostGit(proj, "submodule", "add", "-q", lib, "vendor/lib");
      await hostGit(proj, "commit", "-qm", "with lib");
    }, async ({ proj, sh }) => {
      const evil = (dir: string) =>
        `cp -r ${dir} ${dir}.evil && ` +
        `git config -f ${dir}.evil/config core.fsmonitor 'touch ${marker}; false'`;
      await sh(
        [
          `(${evil("nested/repo/.git")}) 2>/dev/null`,
          "(echo ../.git.evil > nested/repo/.git/commondir) 2>/dev/null",
          `(${evil(".git/modules/vendor/lib")}) 2>/dev/null`,
          "(echo ../lib.evil > .git/modules/vendor/lib/commondir) 2>/dev/null",
        ].join("\n"),
      );
      assert.equal(read(`${proj}/nested/repo/.git/commondir`), ".\n", "held by its placeholder");
      assert.equal(read(`${proj}/.git/modules/vendor/lib/commondir`), ".\n");
      await hostGit(`${proj}/nested/repo`, "status");
      await hostGit(proj, "status");
      assert.equal(read(marker), null, "the agent's code ran in the human's git status");
    });
    Deno.removeSync(marker.slice(0, marker.lastIndexOf("/")), { recursive: true });
  },
);

hostTest(
  "a sandbox that holds a nested repository's commondir and config.worktree while a run going on writes that repository does not wait for it: those placeholders change nothing for git",
  NEEDS_TIER_B,
  async () => {
    await world(coder(), makeGate, async ({ proj, agent, sh }) => {
      const ident = "GIT_AUTHOR_NAME=a GIT_AUTHOR_EMAIL=a@x GIT_COMMITTER_NAME=a " +
        "GIT_COMMITTER_EMAIL=a@x";
      const run = exec(
        agent,
        `git init -q sub && echo > made && read x < gate && ${ident} git -C sub commit -q ` +
          "--allow-empty -m x && git -C sub log --oneline | wc -l",
        { position: "value" },
      ).then((out) => String(((out.value as Rec).out as Rec).v));
      run.catch(() => {}); // awaited below, unless an assertion fails first
      assert.ok(await waitUntil(() => read(`${proj}/made`) !== null, 10000), "git init ran");
      // a new view (sub/.git exists now), whose sandbox holds sub/.git/commondir
      assert.equal(await sh("(echo ../x > sub/.git/commondir) 2>/dev/null; echo other"), "other\n");
      assert.equal(read(`${proj}/sub/.git/commondir`), ".\n");
      await Deno.writeTextFile(`${proj}/gate`, "go\n");
      assert.equal((await run).trim(), "1", "the run's git commit in sub worked");
    });
  },
);
