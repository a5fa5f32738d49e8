/**
 * Issue 14 at the analysis level: what stays exact next to what became opaque, and the effects
 * the new models give (physical paths, `/dev/tcp` connections). The attacks themselves run
 * through the kernel in tests/kernel/fail_closed_test.ts.
 */
import assert from "node:assert/strict";
import {
  deriveEffects,
  type Effect,
  type EffectState,
} from "../../../src/kernel/policy/effects.ts";
import { parseBash } from "../../../src/kernel/bash/ast.ts";
import { withTempDir } from "../../_support/temp_dir.ts";
import { hostGit } from "../../_support/git.ts";

function effects(src: string, extra: Partial<EffectState> = {}): Effect[] {
  return deriveEffects(parseBash(src), src, {
    cwd: "/w",
    env: {},
    changedEnv: new Set(Object.keys(extra.env ?? {})),
    home: "/home/me",
    sessionCommands: new Set(),
    ...extra,
  }).effects;
}

function opaque(src: string, extra: Partial<EffectState> = {}): string | null {
  const found = effects(src, extra).find((effect) => effect.kind === "opaque");
  return found?.kind === "opaque" ? found.reason : null;
}

Deno.test("issue 14: integer arithmetic, safe shell options and plain assignments stay exact", () => {
  for (
    const src of [
      "set -euo pipefail; echo ok",
      "set -e -u -o pipefail +x",
      "for i in 1 2 3; do echo $(( i * 2 )); done",
      "i=0; while (( i < 3 )); do i=$(( i + 1 )); done",
      "true; [[ $? -eq 0 ]] && echo ok",
      "n=${#HOME}; echo $(( n + 1 ))",
      "shopt -s nullglob globstar; echo **/*.ts",
      "export PATH=/opt/bin:$PATH",
      "test -v HOME && echo set",
      "jobs -l",
    ]
  ) {
    assert.equal(opaque(src, { env: { HOME: "/home/me", PATH: "/usr/bin" } }), null, src);
  }
});

Deno.test("issue 14: session variables feed arithmetic: only integers are followed", () => {
  assert.equal(opaque("(( n + 1 ))", { vars: { n: 'declare -- n="5"' } }), null);
  assert.equal(opaque("(( n + 1 ))", { vars: { n: 'declare -i n="5"' } }), null);
  assert.match(
    opaque("(( n + 1 ))", { vars: { n: 'declare -- n="x[\\$(id)]"' } }) ?? "",
    /arithmetic/,
  );
  assert.match(opaque("(( n + 1 ))", { env: { n: "a[$(id)]" } }) ?? "", /arithmetic/);
  assert.match(
    opaque("n=$(cat f); (( n ))") ?? "",
    /arithmetic/,
  );
  assert.match(opaque("n='x'", { vars: { n: 'declare -i n="1"' } }) ?? "x", /x|integer/);
});

Deno.test("issue 14: /dev/tcp and /dev/udp redirections are net_connect, a service name is opaque", () => {
  assert.deepEqual(effects("cat < /dev/tcp/example.com/80"), [
    { kind: "proc_spawn", argv0: "cat", bin_hash: null },
    { kind: "net_connect", host: "example.com", port: 80 },
  ]);
  assert.deepEqual(effects("echo x > /dev/udp/10.0.0.1/53"), [
    { kind: "net_connect", host: "10.0.0.1", port: 53 },
  ]);
  assert.match(opaque("echo x > /dev/tcp/example.com/http") ?? "", /port/);
});

Deno.test("issue 14: paths resolve through symbolic links of their existing prefix", async () => {
  await withTempDir(async (dir) => {
    await Deno.mkdir(`${dir}/real`);
    await Deno.mkdir(`${dir}/w`);
    await Deno.symlink(`${dir}/real`, `${dir}/w/lnk`);
    const at = { cwd: `${dir}/w` };
    assert.deepEqual(effects("echo x > lnk/new/a", at), [
      { kind: "fs_write", paths: [`${dir}/real/new/a`] },
    ]);
    // `..` after a link climbs from where the link points.
    assert.deepEqual(effects("cat lnk/../x", at)[0], { kind: "fs_read", paths: [`${dir}/x`] });
    // rm removes the link itself, not what it points at.
    assert.deepEqual(effects("rm lnk", at)[0], { kind: "fs_delete", paths: [`${dir}/w/lnk`] });
    assert.match(opaque("cat l*/a", at) ?? "", /symbolic link/);
  });
});

Deno.test("issue 14: git stays exact in a clean repository and is opaque once code is configured", async () => {
  await withTempDir(async (dir) => {
    const run = (...args: string[]) =>
      new Deno.Command("git", { args, cwd: dir, stdout: "null", stderr: "null" }).outputSync();
    run("init", "-q");
    const at = { cwd: dir, home: `${dir}/home` };
    assert.deepEqual(effects("git diff", at)[0], { kind: "fs_read", paths: [dir] });
    assert.equal(opaque("git status", at), null);
    assert.equal(opaque("git commit -m x", at), null);
    await Deno.writeTextFile(`${dir}/.git/hooks/pre-commit`, "#!/bin/sh\n");
    assert.match(opaque("git commit -m x", at) ?? "", /hook/);
    assert.equal(opaque("git status", at), null, "hooks do not run on status");
    await Deno.writeTextFile(`${dir}/.git/config`, '[diff "bin"]\n\ttextconv = hexdump\n', {
      append: true,
    });
    assert.match(opaque("git log -p", at) ?? "", /textconv/);
  });
});

Deno.test("a FIFO or a device where git reads a config file neither blocks the analysis nor fills its memory: git is opaque there (an agent's mkfifo .git/config.worktree hung the kernel, every session, at the next git command)", async () => {
  await withTempDir(async (dir) => {
    const run = (cmd: string, ...args: string[]) =>
      new Deno.Command(cmd, { args, cwd: dir, stdout: "null", stderr: "null" }).outputSync();
    run("git", "init", "-q");
    const at = { cwd: dir, home: `${dir}/home` };
    run("mkfifo", ".git/config.worktree");
    // a writer 2 s later: a blocking read would wait for it, then find nothing to object to
    const writer = new Deno.Command("sh", {
      args: ["-c", "sleep 2; echo '[core]' > .git/config.worktree"],
      cwd: dir,
    }).spawn();
    try {
      assert.match(opaque("git status", at) ?? "", /config.worktree cannot be read/);
    } finally {
      writer.kill();
      await writer.status;
    }
    await Deno.remove(`${dir}/.git/config.worktree`);
    await Deno.symlink("/dev/zero", `${dir}/.git/config.worktree`);
    assert.match(opaque("git status", at) ?? "", /config.worktree cannot be read/);
    await Deno.remove(`${dir}/.git/config.worktree`);
    assert.equal(opaque("git status", at), null);
  });
});

Deno.test("a hooks directory of thousands of entries is not read to its end at every git command: git is opaque there", async () => {
  await withTempDir(async (dir) => {
    await hostGit(dir, "init", "-q");
    const at = { cwd: dir, home: `${dir}/home` };
    assert.equal(opaque("git commit -m x", at), null, "git's own samples are no hooks");
    for (let i = 0; i < 1500; i++) Deno.writeTextFileSync(`${dir}/.git/hooks/h${i}.sample`, "");
    assert.match(opaque("git commit -m x", at) ?? "", /hooks holds too many entries/);
  });
});

Deno.test("K-EFF-3: a line continuation bash reads otherwise than the parser is opaque", () => {
  for (
    const src of [
      "cat <<EOF\nE\\\nOF\nrm -f /v\nEOF\n",
      "cat <<-EOF\n\tE\\\nOF\nrm -f /v\nEOF\n",
      "cat <<EOF\n\\\nEOF\nrm -f /v\nEOF\n",
      "f() { cat <<EOF\nE\\\nOF\nrm -f /v\nEOF\n}; f",
      'echo "$\\\n(rm -f /v)"',
      "cat <<EOF\n$\\\n(rm -f /v)\nEOF\n",
      "echo ${x:-$\\\n(rm -f /v)}",
    ]
  ) {
    assert.match(opaque(src) ?? "", /line continuation/, src);
  }
  // Bash keeps a quoted delimiter's body as written, and `\\` before a newline is no continuation.
  for (
    const src of [
      "cat <<'EOF'\nE\\\nOF\nrm -f /v\nEOF\n",
      "cat <<\\EOF\nE\\\nOF\nrm -f /v\nEOF\n",
      "cat <<EOF\nx\\\\\nEOF\n",
      "echo a \\\n  b",
    ]
  ) {
    assert.equal(opaque(src), null, src);
  }
});

Deno.test("K-EFF-3: a known command not found runs command_not_found_handle: opaque when one is defined", () => {
  const handler = { sessionCommands: new Set(["command_not_found_handle"]) };
  const lost = { env: { PATH: "/nonexistent" } };
  assert.match(opaque("cat /etc/hostname", { ...lost, ...handler }) ?? "", /not found/);
  assert.match(
    opaque("command_not_found_handle() { /bin/rm -f a; }; cd /v; cat x", lost) ?? "",
    /not found/,
  );
  // Without a handler the command fails, and a found one runs.
  assert.equal(opaque("cat /etc/hostname", lost), null);
  assert.equal(opaque("cat /etc/hostname", { env: { PATH: "/usr/bin:/bin" }, ...handler }), null);
});
