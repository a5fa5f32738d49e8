/**
 * K-EFF-6 / K-EFF-3a: git's signing configuration names programs too. With `gpg.format ssh` and no
 * `user.signingKey`, `git commit` (and `git tag -s`) runs `gpg.ssh.defaultKeyCommand` to find the
 * key: a repository whose config sets it runs that program on every signed commit, which the
 * derivation must not report as a plain write of the work tree.
 */
import assert from "node:assert/strict";
import { deriveEffects } from "../../../src/kernel/policy/effects.ts";
import { parseBash } from "../../../src/kernel/bash/ast.ts";
import { withTempDir } from "../../_support/temp_dir.ts";

const PATH = "/usr/bin:/bin";

/** Runs `src` in a plain bash in `cwd` with HOME `home`; fails the test when it fails. */
function sh(src: string, cwd: string, home: string): void {
  const done = new Deno.Command("bash", {
    args: ["--noprofile", "--norc", "-c", src],
    cwd,
    env: { HOME: home, PATH },
    clearEnv: true,
  }).outputSync();
  assert.ok(done.success, new TextDecoder().decode(done.stderr));
}

Deno.test("K-EFF-6: git commit in a repository whose config sets gpg.ssh.defaultKeyCommand is opaque", async () => {
  // the derivation said fs_write [repo] while git ran the configured program (marker written)
  await withTempDir(async (root) => {
    const home = `${root}/home`;
    await Deno.mkdir(home);
    await Deno.writeTextFile(`${home}/.gitconfig`, "[user]\n\tname = a\n\temail = a@b\n");
    sh("ssh-keygen -q -t ed25519 -N '' -f key && git init -q repo", root, home);
    await Deno.writeTextFile(
      `${root}/keycmd`,
      `#!/bin/sh\necho ran > '${root}/marker'\necho "key::$(cat '${root}/key.pub')"\n`,
    );
    await Deno.chmod(`${root}/keycmd`, 0o755);
    const repo = `${root}/repo`;
    sh(
      "git config commit.gpgSign true && git config gpg.format ssh && " +
        `git config gpg.ssh.defaultKeyCommand '${root}/keycmd'`,
      repo,
      home,
    );
    const src = "git commit -q --allow-empty -m x";
    const state = {
      cwd: repo,
      env: { HOME: home, PATH },
      changedEnv: new Set<string>(),
      home,
      sessionCommands: new Set<string>(),
    };
    const kinds = deriveEffects(parseBash(src), src, state).effects.map((e) => e.kind);
    // git really runs it (the commit itself may still fail to sign: the key is not the agent's);
    // the key file git writes for ssh-keygen goes to this test's directory, not /tmp
    new Deno.Command("bash", {
      args: ["--noprofile", "--norc", "-c", src],
      cwd: repo,
      env: { HOME: home, PATH, TMPDIR: root },
      clearEnv: true,
      stdout: "null",
      stderr: "null",
    }).outputSync();
    assert.equal(await Deno.readTextFile(`${root}/marker`), "ran\n");
    assert.ok(kinds.includes("opaque"), `${kinds}`);
  }, "/var/tmp");
});
