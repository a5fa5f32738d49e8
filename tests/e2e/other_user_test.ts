// M-ONB-1..3 and P-SBX-1..6 for a user who is not root, as shoal's users are (the rest of this
// suite runs as root, which hid two defects and a sandbox that never started): the printed
// configuration, printed and started as that user by a real MCP SDK client in `/`.
import assert from "node:assert/strict";
// @ts-types="@modelcontextprotocol/sdk/client/index"
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
// @ts-types="@modelcontextprotocol/sdk/client/stdio"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { hostTest, NEEDS_TIER_B } from "../_support/host.ts";
import type { Rec } from "../_support/rec.ts";
import { freshUser, parsePrinted } from "../_support/printed_config.ts";
import { REPO, sandbox } from "../_support/sandbox.ts";
import { exists } from "../_support/paths.ts";
import {
  AS_OTHER_USER,
  giveToOtherUser,
  OTHER_UID,
  otherUserMissing,
} from "../_support/other_user.ts";
import { unixListener } from "../_support/unix_listener.ts";

/** Runs `argv` as the other user under exactly `env`: its exit code, stdout and stderr. */
async function asOtherUser(argv: string[], env: Record<string, string>) {
  const out = await new Deno.Command(AS_OTHER_USER[0], {
    args: [...AS_OTHER_USER.slice(1), ...argv],
    env,
    clearEnv: true,
    cwd: "/",
    stdin: "null",
  }).output();
  const text = new TextDecoder();
  return { code: out.code, stdout: text.decode(out.stdout), stderr: text.decode(out.stderr) };
}

hostTest(
  "a user who is not root pastes the printed configuration: the agent is sandboxed (tier B), works in a project holding another user's repository and commits as that user, cannot connect to a Unix socket there, and the user's own editor may still write .vscode/settings.json while the sandbox is up",
  await otherUserMissing(NEEDS_TIER_B),
  async () => {
    const box = await sandbox();
    try {
      const project = `${box.dir}/proj`;
      await Deno.mkdir(project);
      const user = { ...freshUser(box), DENO_DIR: await giveToOtherUser(box) };
      // a dependency a root build (docker, sudo) fetched into the project: not the user's to write
      await Deno.mkdir(`${project}/vendor/lib/.git/hooks`, { recursive: true });
      await Deno.writeTextFile(`${project}/vendor/lib/.git/config`, "[core]\n");
      await Deno.writeTextFile(`${project}/vendor/lib/.git/HEAD`, "ref: refs/heads/main\n");

      const gitconfig = await asOtherUser(
        [
          "sh",
          "-c",
          "printf '[user]\\n\\tname = Other\\n\\temail = o@example.com\\n' > ~/.gitconfig",
        ],
        user,
      );
      assert.equal(gitconfig.code, 0, gitconfig.stderr);

      const out = await asOtherUser(
        [`${REPO}/bin/shoal-mcp`, "--print-config", "claude-code", "--project", project],
        user,
      );
      assert.equal(out.code, 0, out.stderr);
      assert.doesNotMatch(out.stderr, /OS wall is missing/, "bubblewrap works for this user");
      const printed = parsePrinted("claude-code", out.stdout);
      const agent = new Client({ name: "other-user", version: "0" });
      await agent.connect(
        new StdioClientTransport({
          command: AS_OTHER_USER[0],
          args: [...AS_OTHER_USER.slice(1), printed.command, ...printed.args],
          env: { ...printed.env, DENO_DIR: user.DENO_DIR },
          cwd: "/",
          stderr: "pipe",
        }),
      );
      try {
        const exec = async (src: string) => {
          const r = await agent.callTool({ name: "shoal_exec", arguments: { src } }) as {
            isError: boolean;
            structuredContent: Rec;
          };
          const value = r.structuredContent.value as Rec | undefined;
          const text = ((value?.out as Rec | undefined)?.v as string | undefined) ?? "";
          return { ok: !r.isError && value?.ok === true, text, raw: r.structuredContent };
        };
        const who = await exec("id -u; pwd; ls vendor/lib/.git");
        assert.ok(who.ok, JSON.stringify(who.raw));
        assert.equal(who.text.split("\n").slice(0, 2).join("\n"), `${OTHER_UID}\n${project}`);
        // only the OS wall stops an interpreter: the policy lets opaque programs run (M-ONB-2)
        const bashrc = await exec(`python3 -c "open('$HOME/.bashrc','w').write('evil')"`);
        assert.equal(bashrc.ok, false, "the sandbox is up: the write outside the project fails");
        assert.equal(exists(`${box.dir}/home/.bashrc`), false);
        const commit = await exec(
          "git init -q g && git -C g commit -q --allow-empty -m x && git -C g log --format=%an",
        );
        assert.equal(commit.text, "Other\n", JSON.stringify(commit.raw));
        const vscode = await exec(`python3 -c "open('.vscode/tasks.json','w')"`);
        assert.equal(vscode.ok, false, "a protected name in the project is read-only inside");

        // a socket of the user's in the project (a dev server's, an editor's): the socket filter
        // holds for a user who is not root too (P-SBX-3)
        const listener = unixListener(`${project}/app.sock`);
        try {
          const unix = await exec(
            `python3 -c "import socket; socket.socket(socket.AF_UNIX).connect('app.sock')" 2>&1`,
          );
          assert.equal(unix.ok, false);
          assert.match(unix.text, /Operation not permitted/);
          assert.equal(listener.accepted(), 0, "the user's socket heard the agent");
        } finally {
          listener.close();
        }

        // the user, on the host, while the agent's sandbox holds .vscode as a placeholder
        assert.ok(Deno.statSync(`${project}/.vscode`).isDirectory, "the placeholder is there");
        const editor = await asOtherUser(
          ["sh", "-c", `echo '{}' > ${project}/.vscode/settings.json`],
          user,
        );
        assert.equal(editor.code, 0, editor.stderr);
        assert.equal(await Deno.readTextFile(`${project}/.vscode/settings.json`), "{}\n");
      } finally {
        await agent.close();
      }
    } finally {
      await box.cleanup();
    }
  },
);
