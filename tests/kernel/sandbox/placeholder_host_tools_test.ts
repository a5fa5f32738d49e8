/**
 * What the human's own programs meet on the host while an agent whose write root is HOME has its
 * sandbox up (P-SBX-6 holds every absent protected name there with a placeholder): the human's git
 * and shells read `~/.gitconfig` and `~/.bashrc`, and must work as without them.
 */
import assert from "node:assert/strict";
import type { RpcConnection } from "../../../src/protocol/rpc_client.ts";
import { exec } from "../../_support/exec.ts";
import { hostGit } from "../../_support/git.ts";
import { hostTest, NEEDS_TIER_B } from "../../_support/host.ts";
import { startKernel } from "../../_support/kernel.ts";
import { AGENT_RIGHTS, createToken, writePolicy } from "../../_support/principals.ts";
import type { Rec } from "../../_support/rec.ts";
import { sandbox } from "../../_support/sandbox.ts";

/** `program` with `args` run on the host as the human whose HOME is `home`: its code and stderr. */
async function host(home: string, program: string, ...args: string[]) {
  const out = await new Deno.Command(program, {
    args,
    cwd: home,
    env: { HOME: home, PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin" },
    clearEnv: true,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  const decode = (bytes: Uint8Array) => new TextDecoder().decode(bytes);
  return { code: out.code, out: decode(out.stdout), err: decode(out.stderr) };
}

/**
 * A kernel whose `agent:h` may write all of HOME (no `~/.gitconfig`, `~/.bashrc` or
 * `~/.bash_profile` there, a `~/.profile` and a repository `proj`), with that agent's sandbox up
 * while `body` runs.
 */
async function withHomeAgent(
  body: (home: string, agent: RpcConnection) => Promise<void>,
): Promise<void> {
  const box = await sandbox();
  const home = `${box.dir}/home`;
  await Deno.writeTextFile(`${home}/.profile`, "export FROM_PROFILE=yes\n");
  await Deno.mkdir(`${home}/proj`);
  await hostGit(`${home}/proj`, "init", "-q");
  const token = (await createToken(box, "agent:h", "h")).secret;
  const policy = await writePolicy(box, {
    "agent:h": { fs: { read: ["~/**"], write: ["~/**"] }, ...AGENT_RIGHTS },
  });
  const k = await startKernel(["--policy", policy], box);
  try {
    const human = await k.attach("work");
    await exec(human, `cd ${home}/proj`);
    const agent = await k.attach("work", token);
    const ran = (await exec(agent, "true", { position: "value" })).value as Rec;
    assert.equal(ran.ok, true, JSON.stringify(ran)); // its sandbox is up now, placeholders made
    await body(home, agent);
  } finally {
    await k.cleanup();
  }
}

hostTest(
  "P-SBX-6 while an agent whose write root is HOME has its sandbox up, the human's git and bash on the host work as before: git config --global writes ~/.gitconfig, git status warns of nothing, an interactive bash says nothing of ~/.bashrc; the agent still writes neither",
  NEEDS_TIER_B,
  async () => {
    await withHomeAgent(async (home, agent) => {
      const status = await host(home, "git", "-C", `${home}/proj`, "status", "--short");
      assert.deepEqual([status.code, status.err], [0, ""]);
      const set = await host(home, "git", "config", "--global", "user.name", "Human");
      assert.deepEqual([set.code, set.err], [0, ""]);
      const got = await host(home, "git", "config", "--global", "user.name");
      assert.equal(got.out, "Human\n");
      const shell = await host(home, "bash", "-i", "-c", "true");
      assert.doesNotMatch(shell.err, /bashrc/);
      // still protected: the human's new ~/.gitconfig, and ~/.bashrc held (from a file the
      // static layer does not read, so only the sandbox stands in the way)
      await Deno.writeTextFile(
        `${home}/attack.sh`,
        "(echo evil >> .gitconfig; echo evil > .bashrc; rm -f .bashrc) 2>/dev/null; echo ran\n",
      );
      const ran = (await exec(agent, `cd ${home} && sh attack.sh`, { position: "value" }))
        .value as Rec;
      assert.equal((ran.out as Rec).v, "ran\n", JSON.stringify(ran));
      assert.equal(Deno.readTextFileSync(`${home}/.gitconfig`), "[user]\n\tname = Human\n");
      assert.equal(Deno.readTextFileSync(`${home}/.bashrc`), "");
    });
  },
);

Deno.test({
  name:
    "P-SBX-6 while an agent whose write root is HOME has its sandbox up, the human's new login bash still reads ~/.profile when there is no ~/.bash_profile [ignored: needs a SPEC decision: P-SBX-6 makes every protected name at a write root read-only whether or not it exists, and the only way to keep an absent ~/.bash_profile (or ~/.bash_login) from being created is an entry there, which a login bash reads instead of ~/.profile (the first of the three that exists): the human's new terminals lose what ~/.profile sets (PATH, …) while the agent works. Either the placeholder holds what its absence means (code that reads ~/.bash_login, else ~/.profile, as commondir's '.' does for git) or HOME as a write root leaves them unprotected or is refused]",
  ignore: true,
  fn: async () => {
    await withHomeAgent(async (home) => {
      const login = await host(home, "bash", "-l", "-c", 'echo "$FROM_PROFILE"');
      assert.deepEqual([login.out, login.err], ["yes\n", ""]);
    });
  },
});
