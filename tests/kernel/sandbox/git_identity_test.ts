/**
 * The human's git identity inside the sandbox (`git_identity.ts`): an agent's `git commit` in its
 * project works with the human's name and email, and nothing else of ~/.gitconfig shows. Real
 * kernel, real bwrap, real git.
 */
import assert from "node:assert/strict";
import { sandboxCommand } from "../../../src/kernel/sandbox/command.ts";
import { identityConfig, withGitIdentity } from "../../../src/kernel/sandbox/git_identity.ts";
import { sandboxView } from "../../../src/kernel/sandbox/view.ts";
import { withTempDir } from "../../_support/temp_dir.ts";
import { exec } from "../../_support/exec.ts";
import { HOST_SANDBOX, hostTest, NEEDS_TIER_B } from "../../_support/host.ts";
import { startKernelWithAgent } from "../../_support/kernel.ts";
import { PROJECT_AGENT } from "../../_support/principals.ts";
import type { Rec } from "../../_support/rec.ts";

/** The human's ~/.gitconfig: an identity, and settings that must not reach an agent. */
const HUMAN_GITCONFIG = `[user]
\tname = Ada \\"the human\\" Lovelace
\temail = ada@example.com
[init]
\tdefaultBranch = trunk
[credential]
\thelper = store
[url "https://ada:tok3n@git.example.com/"]
\tinsteadOf = https://git.example.com/
[alias]
\tboom = !touch /tmp/boom
`;

Deno.test("identityConfig keeps the last value of each key, quotes values, drops multi-line ones", () => {
  const listing = [
    "user.name\nfirst",
    'user.name\nA \\ "B"',
    "user.email\nnot\nthis",
    "init.defaultbranch\nmain",
    "",
  ].join("\0");
  assert.equal(
    identityConfig(listing),
    '[user]\n\tname = "A \\\\ \\"B\\""\n[init]\n\tdefaultbranch = "main"\n',
  );
  assert.equal(identityConfig(""), null);
});

hostTest(
  "a sandboxed agent's git commit carries the human's name and email; the rest of ~/.gitconfig stays hidden, and a repository's own identity wins",
  NEEDS_TIER_B,
  async () => {
    const { kernel: k, token } = await startKernelWithAgent("agent:c", PROJECT_AGENT);
    try {
      const home = `${k.box.dir}/home`;
      const proj = `${home}/proj`;
      await Deno.mkdir(proj);
      await Deno.writeTextFile(`${home}/.gitconfig`, HUMAN_GITCONFIG);
      await exec(await k.attach("work"), `cd ${proj}`);
      const agent = await k.attach("work", token);
      const run = async (src: string) => {
        const r = (await exec(agent, src, { position: "value" })).value as Rec;
        return {
          ok: r.ok as boolean,
          text: ((r.out as Rec).v as string) ?? "",
          err: JSON.stringify(r.err),
        };
      };

      const commit = await run(
        "git init -q r && cd r && git commit -q --allow-empty -m x && " +
          "git log -1 --format='%an <%ae>|%cn <%ce>' && git branch --show-current",
      );
      assert.equal(
        commit.text,
        'Ada "the human" Lovelace <ada@example.com>|Ada "the human" Lovelace <ada@example.com>\ntrunk\n',
      );
      assert.equal(commit.ok, true);

      const shown = await run("git config --global --list --show-origin");
      assert.doesNotMatch(shown.text, /credential|tok3n|insteadof|boom/i);

      const local = await new Deno.Command("git", {
        args: ["-C", `${proj}/r`, "config", "user.email", "own@example.com"],
      }).output();
      assert.equal(local.code, 0);
      const own = await run(
        `cd ${proj}/r && git commit -q --allow-empty -m y && git log -1 --format=%ae`,
      );
      assert.equal(own.text, "own@example.com\n", own.err);

      const changed = await run(
        `python3 -c "open('${home}/.gitconfig', 'a').write('[core]\\n\\tpager = evil\\n')"`,
      );
      assert.equal(changed.ok, false, "the agent changed the identity file");
      // the HOME made to hold it takes no writes, though this one lies in the sandbox's /tmp
      const beside = await run(`python3 -c "open('${home}/x', 'w')"`);
      assert.equal(beside.ok, false, "a write beside the identity file succeeded");
      assert.match(await Deno.readTextFile(`${home}/.gitconfig`), /Ada/);
    } finally {
      await k.cleanup();
    }
  },
);

hostTest(
  "a HOME made in the sandbox's /tmp to hold the identity file takes no writes",
  NEEDS_TIER_B,
  async () => {
    await withTempDir(async (dir) => {
      // a HOME under /tmp, nothing of it granted: bwrap makes it in the sandbox's writable /tmp
      const home = `${dir}/home`;
      await Deno.mkdir(`${dir}/work`, { recursive: true });
      await Deno.mkdir(home);
      await Deno.writeTextFile(`${dir}/identity`, '[user]\n\tname = "A"\n');
      const view = withGitIdentity(
        sandboxView({ read: [`${dir}/work/**`], write: [] }, home, []),
        home,
        `${dir}/identity`,
      );
      const host = HOST_SANDBOX as { bwrap: string; prlimit: string };
      const [cmd, ...args] = sandboxCommand(
        {
          ...host,
          principal: "agent:a",
          view,
          cwd: `${dir}/work`,
          scratch: null,
          net: null,
          portFloor: null,
          proxy: null,
          tmpfs: null,
        },
        ["/bin/bash", "--norc", "-c", `git config --global user.name; touch ${home}/x`],
      );
      const r = await new Deno.Command(cmd, {
        args,
        env: { HOME: home, PATH: "/usr/bin:/bin" },
        stderr: "piped",
      })
        .output();
      assert.equal(new TextDecoder().decode(r.stdout), "A\n", new TextDecoder().decode(r.stderr));
      assert.notEqual(r.code, 0, "a write beside the identity file succeeded");
    });
  },
);
