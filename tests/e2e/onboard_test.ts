// Issue 30 / M-ONB-1..3, M-CLI-6: a new user follows the README. `shoal-mcp --print-config` on a
// fresh HOME provisions the sandboxed agent, and exactly the printed command, under exactly the
// printed environment, started by a real MCP SDK client in `/`, works in the project and nowhere
// else.
import assert from "node:assert/strict";
// @ts-types="@modelcontextprotocol/sdk/client/index"
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
// @ts-types="@modelcontextprotocol/sdk/client/stdio"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { hostTest, NEEDS_TIER_B } from "../_support/host.ts";
import type { Rec } from "../_support/rec.ts";
import { freshUser, parsePrinted, type Printed, shoalMcp } from "../_support/printed_config.ts";
import { REPO, type Sandbox, sandbox } from "../_support/sandbox.ts";
import { exists } from "../_support/paths.ts";
import { hostGit } from "../_support/git.ts";

const DENO_DIR = Deno.env.get("DENO_DIR") ?? `${Deno.env.get("HOME")}/.cache/deno`;

/** An SDK client on exactly the printed server, started in `/` as Claude Desktop does. */
async function startPrinted(printed: Printed): Promise<Client> {
  const client = new Client({ name: "new-user", version: "0" });
  await client.connect(
    new StdioClientTransport({
      command: printed.command,
      args: printed.args,
      // DENO_DIR only so the checkout's Deno finds its package cache offline.
      env: { ...printed.env, DENO_DIR },
      cwd: "/",
      stderr: "pipe",
    }),
  );
  return client;
}

interface Ran {
  isError: boolean;
  ok: boolean;
  code: number | null;
  text: string;
}

async function exec(client: Client, src: string): Promise<Ran> {
  const r = await client.callTool({ name: "shoal_exec", arguments: { src } }) as {
    isError: boolean;
    structuredContent: Rec;
    content: { text?: string }[];
  };
  const value = r.structuredContent.value as Rec | undefined;
  return {
    isError: r.isError,
    ok: !r.isError && value?.ok === true,
    code: r.isError ? Number(r.structuredContent.code) : null,
    text: r.content.map((c) => c.text ?? "").join("\n"),
  };
}

/**
 * Whether something the agent wrote is at `path`: an empty directory is the placeholder by which
 * the kernel holds an absent protected name while a sandbox lives (P-SBX-6), not the agent's.
 */
function leftByAgent(path: string): boolean {
  if (!exists(path)) return false;
  if (!Deno.lstatSync(path).isDirectory) return true;
  return [...Deno.readDirSync(path)].length > 0;
}

/** Runs `body` for a fresh user of a new sandbox with an empty project directory, then cleans up. */
async function withNewUser(
  body: (box: Sandbox, project: string, user: Record<string, string>) => Promise<void>,
): Promise<void> {
  const box = await sandbox();
  try {
    const project = `${box.dir}/proj`;
    await Deno.mkdir(project);
    await body(box, project, freshUser(box));
  } finally {
    await box.cleanup();
  }
}

/** Runs `body` with an SDK client on exactly the printed server, then closes it. */
async function withPrinted(printed: Printed, body: (agent: Client) => Promise<void>) {
  const agent = await startPrinted(printed);
  try {
    await body(agent);
  } finally {
    await agent.close();
  }
}

hostTest(
  "M-ONB-1..3: a new user prints the claude-code configuration, starts exactly it from /, and the agent works in the project and nowhere else",
  NEEDS_TIER_B,
  () =>
    withNewUser(async (box, project, user) => {
      const out = await shoalMcp(["--print-config", "claude-code", "--project", project], user);
      assert.equal(out.code, 0, out.stderr);
      const lines = out.stderr.trim().split("\n");
      assert.equal(lines.length, 3, out.stderr);
      assert.match(lines[0], /^policy: created .*leash\.jsonc: agent:claude-code may work in /);
      assert.match(lines[1], /^token: created [0-9a-f]{16} for agent:claude-code/);
      assert.match(
        lines[2],
        /^session: agent:claude-code works in this project's own session proj-[0-9a-f]{8} /,
      );
      const printed = parsePrinted("claude-code", out.stdout);
      assert.deepEqual(printed.args, [], "a facade with no arguments loads no Node layer");
      assert.equal(printed.env.SHOAL_PROJECT, project);
      assert.match(printed.env.SHOAL_TOKEN, /^[A-Za-z0-9_-]{43}$/);
      const policy = `${box.dir}/home/.config/shoal/leash.jsonc`;
      assert.equal(Deno.statSync(policy).mode! & 0o777, 0o600);
      assert.equal(Deno.statSync(`${box.dir}/home/.config/shoal`).mode! & 0o777, 0o700);

      await withPrinted(printed, async (agent) => {
        const attached = await exec(agent, "pwd");
        assert.ok(attached.ok, attached.text);
        assert.equal(attached.text.trim(), project, "the session starts in the project");
        const work = [
          "ls -la",
          "printf 'all: hello\\nhello: hello.c\\n\\tcc -o hello hello.c\\n' > Makefile",
          "printf '#include <stdio.h>\\nint main(void) { puts(\"hi\"); return 0; }\\n' > hello.c",
          "git init -q && git add -A && GIT_AUTHOR_NAME=a GIT_AUTHOR_EMAIL=a@example.com " +
          "GIT_COMMITTER_NAME=a GIT_COMMITTER_EMAIL=a@example.com git commit -qm x",
          "git log --oneline && git status --short",
          "grep -rn main --include='*.c' .",
          "make && ./hello",
          `python3 -c "open('made-by-python.txt','w').write('ok')"`,
          "date +%Y",
        ];
        for (const src of work) {
          const ran = await exec(agent, src);
          assert.ok(ran.ok, `${src}: ${ran.text}`);
        }
        assert.ok(exists(`${project}/hello`), "make built the program");
        assert.ok(
          exists(`${project}/made-by-python.txt`),
          "python3 runs and writes in the project",
        );

        const fetch = await exec(agent, "curl -sS https://example.com/");
        assert.equal(fetch.ok, false);
        assert.match(
          fetch.text,
          /lacks net_connect \\?"example\.com:443\\?"/,
          "the refusal names the destination and the grant to add",
        );
        const outside = await exec(agent, "touch ~/x");
        assert.ok(outside.text.includes(`fs.write \\"${box.dir}/home/x\\"`), outside.text);

        const home = `${box.dir}/home`;
        const refused: [string, string][] = [
          ["touch ~/x", `${home}/x`],
          ["echo x > /etc/x", "/etc/x"],
          [`python3 -c "open('$HOME/.bashrc','a')"`, `${home}/.bashrc`],
          ["echo evil > .git/hooks/pre-commit", `${project}/.git/hooks/pre-commit`],
          [`python3 -c "open('.envrc','w')"`, `${project}/.envrc`],
        ];
        const failures: string[] = [];
        for (const [src, path] of refused) {
          const ran = await exec(agent, src);
          if (ran.ok) failures.push(`${src} succeeded`);
          if (leftByAgent(path)) failures.push(`${src} left ${path}`);
        }
        assert.deepEqual(failures, []);
      });
    }),
);

Deno.test("M-ONB-1/M-CLI-6: the printed claude mcp add line, pasted in a shell elsewhere (HOME), registers shoal for --project in Claude Code's local scope: it ran in HOME, which Claude Code keys a local server by, so claude started in the project had no shoal", async () => {
  await withNewUser(async (box, _project, user) => {
    // a project at a path a shell must quote
    const project = `${box.dir}/My Proj/José's`;
    await Deno.mkdir(project, { recursive: true });
    const out = await shoalMcp(["--print-config", "claude-code", "--project", project], user);
    assert.equal(out.code, 0, out.stderr);
    // Claude Code's `claude mcp add` stands in: where it ran and what it was given
    const bin = `${box.dir}/claude-bin`;
    await Deno.mkdir(bin);
    await Deno.writeTextFile(
      `${bin}/claude`,
      `#!/bin/sh\npwd -P > "${box.dir}/claude-ran"\nprintf '%s\\n' "$@" >> "${box.dir}/claude-ran"\n`,
      { mode: 0o755 },
    );
    const shell = await new Deno.Command("bash", {
      args: ["-c", out.stdout],
      cwd: user.HOME,
      env: { ...user, PATH: `${bin}:/usr/bin:/bin` },
      clearEnv: true,
    }).output();
    assert.equal(shell.code, 0, new TextDecoder().decode(shell.stderr));
    const [cwd, ...args] = Deno.readTextFileSync(`${box.dir}/claude-ran`).trimEnd().split("\n");
    assert.equal(cwd, await Deno.realPath(project), "claude mcp add ran in the project");
    assert.deepEqual(args.slice(0, 2), ["mcp", "add"]);
    const scope = args.findIndex((a) => a === "--scope" || a === "-s");
    assert.ok(scope > 0 && args[scope + 1] === "local", args.join(" "));
    assert.ok(args.includes(`SHOAL_PROJECT=${project}`), args.join(" "));
    // and the tests' own reading of the line agrees with the shell's
    assert.equal(parsePrinted("claude-code", out.stdout).env.SHOAL_PROJECT, project);
  });
});

hostTest(
  "M-ONB-1: one client's agent open on two projects: each works in its own session, so the second one's attach and cd never move the first one's shell, and one kernel serves both",
  NEEDS_TIER_B,
  () =>
    withNewUser(async (box, project, user) => {
      const other = `${box.dir}/other`;
      await Deno.mkdir(other);
      const print = async (dir: string) => {
        const out = await shoalMcp(["--print-config", "claude-code", "--project", dir], user);
        assert.equal(out.code, 0, out.stderr);
        return parsePrinted("claude-code", out.stdout);
      };
      const [first, second] = [await print(project), await print(other)];
      await withPrinted(first, async (a) => {
        assert.equal((await exec(a, "pwd")).text.trim(), project);
        await withPrinted(second, async (b) => {
          assert.equal((await exec(b, "pwd")).text.trim(), other);
          const moved = await exec(b, "mkdir -p sub && cd sub && export ONLY_B=1 && pwd");
          assert.equal(moved.text.trim(), `${other}/sub`);
          const still = await exec(a, 'pwd && echo "[${ONLY_B-}]" && touch made-by-a');
          assert.ok(still.ok, still.text);
          assert.equal(still.text.trim(), `${project}\n[]`);
          assert.ok(exists(`${project}/made-by-a`));
          assert.equal((await exec(b, "pwd")).text.trim(), `${other}/sub`);
          // you join that project's session with the same configuration without the token
          await withPrinted({ ...second, env: { ...second.env, SHOAL_TOKEN: "" } }, async (me) => {
            const seen = await exec(me, 'echo "<${ONLY_B-}>"');
            assert.equal(seen.text.trim(), "<1>", "the agent's plain variable, in its session");
          });
        });
      });
      const sockets = [...Deno.readDirSync(`${box.dir}/run/shoal`)]
        .map((e) => e.name).filter((name) => name.endsWith(".sock"));
      assert.deepEqual(sockets, ["default.sock"], "one kernel, on the default socket");
    }),
);

hostTest(
  "M-CLI-6/M-ONB-1: each client's printed configuration parses, starts, and runs one exec as the sandboxed agent in its project",
  NEEDS_TIER_B,
  () =>
    withNewUser(async (box, project, user) => {
      for (const client of ["claude-desktop", "claude-code", "vscode", "cursor"]) {
        const out = await shoalMcp(["--print-config", client, "--project", project], user);
        assert.equal(out.code, 0, out.stderr);
        const printed = parsePrinted(client, out.stdout);
        assert.equal(printed.command, `${REPO}/bin/shoal-mcp`);
        assert.deepEqual(Object.keys(printed.env).sort(), [
          "HOME",
          "PATH",
          "SHOAL_PROJECT",
          "SHOAL_TOKEN",
          "XDG_CONFIG_HOME",
          "XDG_RUNTIME_DIR",
          "XDG_STATE_HOME",
        ]);
        assert.deepEqual(printed.args, []);
        await withPrinted(printed, async (agent) => {
          const ran = await exec(agent, "pwd && touch made-by-agent");
          assert.ok(ran.ok, `${client}: ${ran.text}`);
          assert.equal(ran.text.trim(), project);
          const outside = await exec(agent, `touch ${box.dir}/home/out`);
          assert.equal(outside.ok, false, `${client}: a write outside the project is refused`);
          assert.equal(exists(`${box.dir}/home/out`), false);
        });
      }
      assert.ok(exists(`${project}/made-by-agent`));
    }),
);

hostTest(
  "M-ONB-1: with XDG_CONFIG_HOME and XDG_STATE_HOME set, the printed env passes them on, so the autostarted kernel uses the policy and state --print-config wrote",
  NEEDS_TIER_B,
  () =>
    withNewUser(async (box, project, fresh) => {
      const user = {
        ...fresh,
        XDG_CONFIG_HOME: `${box.dir}/config`,
        XDG_STATE_HOME: `${box.dir}/state`,
      };
      const out = await shoalMcp(["--print-config", "claude-desktop"], user, project);
      assert.equal(out.code, 0, out.stderr);
      assert.match(out.stderr, new RegExp(`policy: created ${box.dir}/config/shoal/leash\\.jsonc`));
      const printed = parsePrinted("claude-desktop", out.stdout);
      assert.deepEqual(printed.args, []);
      assert.equal(printed.env.SHOAL_PROJECT, project, "DIR defaults to the current one");
      assert.equal(printed.env.XDG_CONFIG_HOME, `${box.dir}/config`);
      assert.equal(printed.env.XDG_STATE_HOME, `${box.dir}/state`);
      await withPrinted(printed, async (agent) => {
        const ran = await exec(agent, "pwd");
        assert.ok(ran.ok, ran.text);
        assert.equal(ran.text.trim(), project);
      });
      assert.ok(
        exists(`${box.dir}/state/shoal/journal.db`),
        "the kernel's state is the one printed",
      );
      assert.equal(exists(`${box.dir}/home/.local/state/shoal`), false);
    }),
);

hostTest(
  "M-ONB-1/G-STATE-1: relative XDG_CONFIG_HOME and XDG_STATE_HOME at print time are printed absolute, so the kernel the client autostarts from / finds the policy and token --print-config wrote",
  NEEDS_TIER_B,
  () =>
    withNewUser(async (box, project, fresh) => {
      // Unique names: a kernel that took them relative to / would make them there.
      const name = box.dir.split("/").pop()!;
      const [config, state] = [`${name}-config`, `${name}-state`];
      try {
        const user = { ...fresh, XDG_CONFIG_HOME: config, XDG_STATE_HOME: state };
        const out = await shoalMcp(
          ["--print-config", "cursor", "--project", project],
          user,
          box.dir,
        );
        assert.equal(out.code, 0, out.stderr);
        const printed = parsePrinted("cursor", out.stdout);
        assert.equal(printed.env.XDG_CONFIG_HOME, `${box.dir}/${config}`);
        assert.equal(printed.env.XDG_STATE_HOME, `${box.dir}/${state}`);
        await withPrinted(printed, async (agent) => {
          const ran = await exec(agent, "pwd");
          assert.ok(ran.ok, ran.text);
          assert.equal(ran.text.trim(), project);
        });
        assert.ok(exists(`${box.dir}/${state}/shoal/journal.db`), "the state printed");
      } finally {
        for (const made of [config, state]) {
          await Deno.remove(`/${made}`, { recursive: true }).catch(() => {});
        }
      }
    }),
);

hostTest(
  "M-ONB-1/G-STATE-1/G-STATE-3: a client whose own environment names other XDG_CONFIG_HOME and XDG_STATE_HOME (a Flatpak editor's, passed on to its servers) still starts a kernel on the policy and token --print-config wrote: the printed env names both places",
  NEEDS_TIER_B,
  () =>
    withNewUser(async (box, project, user) => {
      const out = await shoalMcp(["--print-config", "vscode", "--project", project], user);
      assert.equal(out.code, 0, out.stderr);
      const printed = parsePrinted("vscode", out.stdout);
      assert.equal(printed.env.XDG_CONFIG_HOME, `${box.dir}/home/.config`);
      assert.equal(printed.env.XDG_STATE_HOME, `${box.dir}/home/.local/state`);
      // the client's environment first, the configuration's env over it, as clients merge them
      const client = {
        XDG_CONFIG_HOME: `${box.dir}/home/.var/app/editor/config`,
        XDG_STATE_HOME: `${box.dir}/home/.var/app/editor/.local/state`,
      };
      await withPrinted({ ...printed, env: { ...client, ...printed.env } }, async (agent) => {
        const ran = await exec(agent, "pwd");
        assert.ok(ran.ok, ran.text);
        assert.equal(ran.text.trim(), project);
      });
    }),
);

hostTest(
  "M-ONB-1/M-ONB-3: with TMPDIR set at print time (pam_tmpdir's /tmp/user/<uid>, a ~/tmp) and no XDG_RUNTIME_DIR, the printed env pins the socket TMPDIR found (SHOAL_SOCKET) instead of passing TMPDIR, which names a directory the agent's sandbox does not show: its mktemp works",
  NEEDS_TIER_B,
  () =>
    withNewUser(async (box, project, fresh) => {
      const { XDG_RUNTIME_DIR: _, ...rest } = fresh;
      await Deno.mkdir(`${box.dir}/home/tmp`);
      // reached through a symlink, which a named socket's path may not hold (G-SOCK-10)
      await Deno.symlink(`${box.dir}/home/tmp`, `${box.dir}/tmp-link`);
      const user = { ...rest, TMPDIR: `${box.dir}/tmp-link` };
      const out = await shoalMcp(["--print-config", "cursor", "--project", project], user);
      assert.equal(out.code, 0, out.stderr);
      const printed = parsePrinted("cursor", out.stdout);
      assert.equal(printed.env.TMPDIR, undefined);
      const socket = `${box.dir}/home/tmp/shoal-${Deno.uid()}/shoal/default.sock`;
      assert.equal(printed.env.SHOAL_SOCKET, socket, "where the terminal's approvals look");
      await withPrinted(printed, async (agent) => {
        const ran = await exec(agent, "f=$(mktemp) && echo made > $f && cat $f && pwd");
        assert.ok(ran.ok, ran.text);
        assert.equal(ran.text.trim(), `made\n${project}`);
      });
      assert.ok(exists(socket), "the kernel serves there");
    }),
);

hostTest(
  "M-ONB-1/M-ONB-2: a principal the user wrote by hand (a comment, other grants, no session_write, no sandbox) gains the project profile's fields it lacks and keeps its own, so the printed configuration attaches, runs sandboxed in the project, and the hand-written grants stay",
  NEEDS_TIER_B,
  () =>
    withNewUser(async (box, project, user) => {
      const policy = `${box.dir}/home/.config/shoal/leash.jsonc`;
      await Deno.mkdir(`${box.dir}/home/.config/shoal`, { recursive: true, mode: 0o700 });
      const hand = [
        "// mine",
        "{",
        '  "principal": {',
        '    "agent:cursor": {',
        '      "fs.read": ["/srv/**"], // docs',
        '      "net_connect": ["github.com:443"],',
        "    },",
        "  },",
        "}",
        "",
      ].join("\n");
      await Deno.writeTextFile(policy, hand, { mode: 0o600 });
      const out = await shoalMcp(["--print-config", "cursor", "--project", project], user);
      assert.equal(out.code, 0, out.stderr);
      assert.equal(out.stderr.trim().split("\n").length, 3, out.stderr);
      const text = await Deno.readTextFile(policy);
      assert.ok(text.startsWith("// mine\n"), text);
      assert.ok(text.includes('"fs.read": ["/srv/**", '), text);
      assert.ok(text.includes("// docs"), text);
      assert.ok(text.includes('"net_connect": ["github.com:443"]'), "the user's own grant stays");
      assert.ok(text.includes('"sandbox": true'), text);
      await withPrinted(parsePrinted("cursor", out.stdout), async (agent) => {
        const ran = await exec(agent, "pwd && ls && touch made-by-agent");
        assert.ok(ran.ok, ran.text);
        assert.equal(ran.text.trim(), project);
        const outside = await exec(agent, `touch ${box.dir}/home/out`);
        assert.equal(outside.ok, false, outside.text);
        const python = await exec(agent, `python3 -c "open('${box.dir}/home/py','w')"`);
        assert.equal(python.ok, false, "the OS wall holds an interpreter to the grants");
      });
      assert.ok(exists(`${project}/made-by-agent`));
      assert.equal(exists(`${box.dir}/home/out`) || exists(`${box.dir}/home/py`), false);
    }),
);

hostTest(
  "M-ONB-1/M-START-3: after the user moves the project, the pasted configuration's calls say that its project is gone and how to print a new one, instead of only 'cwd is not an absolute path to a directory'",
  NEEDS_TIER_B,
  () =>
    withNewUser(async (box, project, user) => {
      const out = await shoalMcp(["--print-config", "claude-desktop", "--project", project], user);
      assert.equal(out.code, 0, out.stderr);
      const printed = parsePrinted("claude-desktop", out.stdout);
      await Deno.rename(project, `${box.dir}/moved`);
      await withPrinted(printed, async (agent) => {
        // the attach fails, so the call is a protocol error (-32603, M-START-3)
        const text = await exec(agent, "pwd").then((r) => r.text, (e: Error) => e.message);
        assert.ok(text.includes(`project ${project}`), text);
        assert.match(text, /moved or deleted/);
        assert.match(text, /--print-config CLIENT --project DIR/);
      });
    }),
);

hostTest(
  "M-CLI-6/M-PERM-2: a user whose HOME and runtime directory hold a comma (Deno's permission lists are comma-separated) gets a printed configuration that starts and reaches its kernel, instead of a facade refused at start ('invalid host') and a client left with 'Connection closed'",
  NEEDS_TIER_B,
  () =>
    withNewUser(async (box, project, fresh) => {
      const odd = `${box.dir}/Smith, Jo`;
      for (const sub of ["home", "run"]) {
        await Deno.mkdir(`${odd}/${sub}`, { recursive: true, mode: 0o700 });
      }
      const user = { ...fresh, HOME: `${odd}/home`, XDG_RUNTIME_DIR: `${odd}/run` };
      const out = await shoalMcp(["--print-config", "cursor", "--project", project], user);
      assert.equal(out.code, 0, out.stderr);
      const printed = parsePrinted("cursor", out.stdout);
      assert.equal(printed.env.XDG_RUNTIME_DIR, `${odd}/run`);
      await withPrinted(printed, async (agent) => {
        const ran = await exec(agent, "pwd");
        assert.ok(ran.ok, ran.text);
        assert.equal(ran.text.trim(), project);
      });
    }),
);

hostTest(
  "M-ONB-1: --as-human, for each client, says on stderr in one line that the agent acts as you, prints a configuration without a token, touches neither policy nor tokens, and what it prints runs unconfined from /",
  NEEDS_TIER_B,
  () =>
    withNewUser(async (box, project, user) => {
      for (const client of ["claude-desktop", "claude-code", "vscode", "cursor"]) {
        const out = await shoalMcp(["--print-config", client, "--as-human"], user, project);
        assert.equal(out.code, 0, out.stderr);
        const lines = out.stderr.trim().split("\n");
        assert.equal(lines.length, 1, out.stderr);
        assert.match(lines[0], /warning: --as-human: .*acts as you: unconfined/);
        const printed = parsePrinted(client, out.stdout);
        assert.deepEqual(Object.keys(printed.env), ["PATH"]);
        assert.deepEqual(printed.args, []);
      }
      assert.equal(exists(`${box.dir}/home/.config/shoal`), false, "no policy written");
      assert.equal(exists(`${box.dir}/home/.local/state/shoal`), false, "no token made");
      const out = await shoalMcp(["--print-config", "cursor", "--as-human"], user, project);
      const printed = parsePrinted("cursor", out.stdout);
      // the client's own environment names the runtime directory (see the ignored test below)
      const env = { ...printed.env, HOME: user.HOME, XDG_RUNTIME_DIR: user.XDG_RUNTIME_DIR };
      await withPrinted({ ...printed, env }, async (human) => {
        const ran = await exec(human, `touch ${box.dir}/home/human-was-here && echo ok`);
        assert.ok(ran.ok, ran.text);
      });
      assert.ok(exists(`${box.dir}/home/human-was-here`));
    }),
);

Deno.test({
  name:
    "SPEC decision needed (M-ONB-1 '--as-human prints the previous configuration' vs M-CLI-6 'finds its kernel under a minimal environment'): the --as-human env is PATH only, so a client passing HOME and PATH starts the facade on /tmp/shoal-<uid> while the terminal's kernel is under XDG_RUNTIME_DIR: two kernels on one state directory; the agent configuration passes XDG_RUNTIME_DIR, XDG_CONFIG_HOME and XDG_STATE_HOME",
  ignore: true,
  fn: () =>
    withNewUser(async (_box, project, user) => {
      const out = await shoalMcp(["--print-config", "cursor", "--as-human"], user, project);
      assert.equal(out.code, 0, out.stderr);
      const printed = parsePrinted("cursor", out.stdout);
      assert.equal(printed.env.XDG_RUNTIME_DIR, user.XDG_RUNTIME_DIR);
    }),
});

Deno.test({
  name:
    "SPEC decision needed (M-ONB-1 vs M-ONB-2): a hand-written agent:CLIENT entry that sets session_write: false (or sandbox: false) keeps it, so the printed configuration fails at attach (or runs unsandboxed) while --print-config reports success; should it refuse, warn, or override the user's value?",
  ignore: true,
  fn: () =>
    withNewUser(async (box, project, user) => {
      const policy = `${box.dir}/home/.config/shoal/leash.jsonc`;
      await Deno.mkdir(`${box.dir}/home/.config/shoal`, { recursive: true, mode: 0o700 });
      const hand = '{"principal": {"agent:cursor": {"session_write": false, "sandbox": false}}}\n';
      await Deno.writeTextFile(policy, hand, { mode: 0o600 });
      const out = await shoalMcp(["--print-config", "cursor", "--project", project], user);
      // Either a refusal (exit 1, naming the field) or a configuration that works, sandboxed:
      if (out.code !== 0) {
        assert.match(out.stderr, /session_write|sandbox/);
        return;
      }
      await withPrinted(parsePrinted("cursor", out.stdout), async (agent) => {
        const ran = await exec(agent, "pwd");
        assert.ok(ran.ok, ran.text);
        const python = await exec(agent, `python3 -c "open('${box.dir}/home/py','w')"`);
        assert.equal(python.ok, false, "sandboxed");
      });
    }),
});

Deno.test({
  name:
    "M-ONB-3 the printed configuration on a project that is a git worktree (DIR/.git a file naming <repo>/.git/worktrees/NAME, as Claude Code's and Cursor's agent worktrees are): git status and git commit work; they were denied, 'lacks fs.read <repo>/.git'",
  fn: () =>
    withNewUser(async (box, _project, user) => {
      const repo = `${box.dir}/repo`;
      const tree = `${box.dir}/feature`;
      await Deno.mkdir(repo);
      await hostGit(repo, "init", "-q");
      await Deno.writeTextFile(`${repo}/a`, "a\n");
      await hostGit(repo, "add", "a");
      await hostGit(repo, "commit", "-qm", "init");
      await hostGit(repo, "worktree", "add", "-q", tree, "-b", "feature");
      const out = await shoalMcp(["--print-config", "claude-code", "--project", tree], user);
      assert.equal(out.code, 0, out.stderr);
      await withPrinted(parsePrinted("claude-code", out.stdout), async (agent) => {
        const status = await exec(agent, "git status --short");
        assert.ok(status.ok, status.text);
        const commit = await exec(
          agent,
          "echo b > b && git add b && GIT_AUTHOR_NAME=a GIT_AUTHOR_EMAIL=a@x " +
            "GIT_COMMITTER_NAME=a GIT_COMMITTER_EMAIL=a@x git commit -qm b",
        );
        assert.ok(commit.ok, commit.text);
      });
    }),
});
