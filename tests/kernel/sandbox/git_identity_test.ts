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
import { startKernel, startKernelWithAgent } from "../../_support/kernel.ts";
import { createToken, PROJECT_AGENT, writePolicy } from "../../_support/principals.ts";
import { sandbox } from "../../_support/sandbox.ts";
import type { Rec } from "../../_support/rec.ts";
import type { RpcConnection } from "../../../src/protocol/rpc_client.ts";

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

/**
 * Runs `body` with a kernel whose agent works in `<home>/proj` (the session there), the agent's
 * connection, and `before` run first, once the directories exist.
 */
async function withProjectAgent(
  body: (agent: RpcConnection, home: string, proj: string) => Promise<void>,
  before: (home: string) => Promise<void> = async () => {},
): Promise<void> {
  const { kernel: k, token } = await startKernelWithAgent("agent:c", PROJECT_AGENT);
  try {
    const home = `${k.box.dir}/home`;
    const proj = `${home}/proj`;
    await Deno.mkdir(proj);
    await before(home);
    await exec(await k.attach("work"), `cd ${proj}`);
    await body(await k.attach("work", token), home, proj);
  } finally {
    await k.cleanup();
  }
}

hostTest(
  "a sandboxed agent's git commit carries the human's name and email; the rest of ~/.gitconfig stays hidden, and a repository's own identity wins",
  NEEDS_TIER_B,
  () =>
    withProjectAgent(async (agent, home, proj) => {
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
    }, (home) => Deno.writeTextFile(`${home}/.gitconfig`, HUMAN_GITCONFIG)),
);

hostTest(
  "a sandboxed agent's next commit carries the identity the human set or changed since the kernel's first sandboxed run (it kept the first for the kernel's life)",
  NEEDS_TIER_B,
  () =>
    withProjectAgent(async (agent, home) => {
      const author = async () => {
        const r = (await exec(agent, "git log -1 --format='%an <%ae>'", { position: "value" }))
          .value as Rec;
        return ((r.out as Rec).v as string) ?? "";
      };
      await exec(agent, "git init -q r && cd r && git config user.name Repo", {
        position: "value",
      });
      // no global identity yet: the repository's name and git's guess of an email
      await exec(agent, "git commit -q --allow-empty -m 1 || true");
      await Deno.writeTextFile(`${home}/.gitconfig`, "[user]\n\temail = first@example.com\n");
      await exec(agent, "git commit -q --allow-empty -m 2");
      assert.equal(await author(), "Repo <first@example.com>\n");
      await Deno.writeTextFile(`${home}/.gitconfig`, "[user]\n\temail = second@example.com\n");
      await exec(agent, "git commit -q --allow-empty -m 3");
      assert.equal(await author(), "Repo <second@example.com>\n");
    }),
);

hostTest(
  "a ~/.gitconfig including a FIFO holds neither the kernel's start nor a sandboxed agent's run (the first sandboxed exec waited on it for good)",
  NEEDS_TIER_B,
  async () => {
    const box = await sandbox();
    const home = `${box.dir}/home`;
    let k;
    let secret: string;
    try {
      await Deno.mkdir(`${home}/proj`, { recursive: true });
      const fifo = await new Deno.Command("mkfifo", { args: [`${home}/fifo`] }).output();
      assert.equal(fifo.code, 0);
      await Deno.writeTextFile(`${home}/.gitconfig`, `[include]\n\tpath = ${home}/fifo\n`);
      ({ secret } = await createToken(box, "agent:c", "agent:c"));
      const file = await writePolicy(box, { "agent:c": PROJECT_AGENT });
      k = await startKernel(["--policy", file], box);
    } catch (e) {
      await box.cleanup();
      throw e;
    }
    try {
      let timer: ReturnType<typeof setTimeout> | undefined;
      const held = new Promise<"held">((done) => {
        timer = setTimeout(() => done("held"), 30_000);
      });
      // where the kernel first looks at the agent's sandbox is not this test's business
      const ran = k.attach("work")
        .then((human) => exec(human, `cd ${home}/proj`))
        .then(() => k.attach("work", secret))
        .then((agent) => exec(agent, "echo ran", { position: "value" }))
        .then((r) => r.value as Rec);
      const first = await Promise.race([ran, held]);
      clearTimeout(timer);
      // a kernel held for good takes no SIGTERM either
      if (first === "held") k.child.kill("SIGKILL");
      assert.notEqual(first, "held", "the agent's attach and exec did not answer within 30 s");
      assert.equal(((first as Rec).out as Rec).v, "ran\n");
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
