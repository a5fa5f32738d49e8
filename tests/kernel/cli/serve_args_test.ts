import assert from "node:assert/strict";
import { parseServeArgs } from "../../../src/kernel/cli/serve_args.ts";
import { UsageError } from "../../../src/protocol/cli_args.ts";
import { VERSION } from "../../../src/protocol/version.ts";
import { kernelCli } from "../../_support/principals.ts";
import { sandbox } from "../../_support/sandbox.ts";

Deno.test("K-CLI-1: serve flags take --x v and --x=v alike; the last one wins", () => {
  assert.deepEqual(
    parseServeArgs([
      "--session=work",
      "--socket",
      "/r/k.sock",
      "--state-dir=/s",
      "--policy",
      "/p.jsonc",
      "--bash=/bin/bash",
      "--socket=/r/last.sock",
    ]),
    {
      session: "work",
      socket: "/r/last.sock",
      stateDir: "/s",
      policy: "/p.jsonc",
      bash: "/bin/bash",
    },
  );
  assert.equal(parseServeArgs([]).session, "default");
});

Deno.test("K-CLI-1: unknown flags, missing values, operands and bad sessions are usage errors", () => {
  for (
    const args of [
      ["--bogus"],
      ["--bogus=1"],
      ["--socket"],
      ["--socket", "--session", "s"],
      ["operand"],
      ["--session=../x"],
      ["--session", ""],
    ]
  ) {
    assert.throws(() => parseServeArgs(args), UsageError, args.join(" "));
  }
});

Deno.test("K-CLI-1: an empty path (--socket, --state-dir, --policy, --bash) is a usage error (exit 2), not the default: --socket '' served the default socket and --bash '' the default bash, --state-dir '' exited 1", async () => {
  for (const name of ["socket", "state-dir", "policy", "bash"]) {
    for (const args of [[`--${name}`, ""], [`--${name}=`], [`--${name}=/x`, `--${name}=`]]) {
      assert.throws(() => parseServeArgs(args), UsageError, args.join(" "));
    }
  }
  const box = await sandbox();
  try {
    for (
      const args of [
        ["--state-dir="],
        ["token", "list", "--state-dir="],
        ["approvals", "--socket="],
        ["connect", "--socket="],
      ]
    ) {
      const run = await kernelCli(box, args);
      assert.equal(run.code, 2, `${args.join(" ")}: ${run.stderr}`);
      assert.match(run.stderr, /must not be empty\nusage: shoal-kernel/, args.join(" "));
    }
  } finally {
    await box.cleanup();
  }
});

Deno.test("M-CLI-4/K-CLI-1: shoal-kernel --version is one line, --help explains and exits 0, bad usage exits 2", async () => {
  const box = await sandbox();
  try {
    const version = await kernelCli(box, ["--version"]);
    assert.deepEqual([version.code, version.stdout], [0, `shoal-kernel ${VERSION}\n`]);
    const help = await kernelCli(box, ["--help"]);
    assert.equal(help.code, 0);
    for (
      const word of [
        "--session",
        "--socket",
        "--state-dir",
        "--policy",
        "--bash",
        "token create",
        "approve",
        "XDG_RUNTIME_DIR",
        "XDG_STATE_HOME",
        "XDG_CONFIG_HOME",
        "kernel.log",
      ]
    ) {
      assert.ok(help.stdout.includes(word), word);
    }
    // after a command too, as `git commit --help` is (it was "Unknown option '--help'", exit 2)
    for (
      const args of [
        ["serve", "--help"],
        ["token", "--help"],
        ["token", "create", "-h"],
        ["onboard", "claude-code", "--help"],
        ["approve", "--help"],
        ["approvals", "-h"],
      ]
    ) {
      const asked = await kernelCli(box, args);
      assert.deepEqual(
        [asked.code, asked.stdout, asked.stderr],
        [0, help.stdout, ""],
        args.join(" "),
      );
    }
    const bad = await kernelCli(box, ["--socket=/x.sock", "--bogus"]);
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /^shoal-kernel: Unknown option '--bogus'\nusage: shoal-kernel/);
  } finally {
    await box.cleanup();
  }
});

Deno.test("K-CLI-3: every kernel command's error repeats arguments with their controls as \\u escapes, not raw for the terminal to run", async () => {
  const box = await sandbox();
  try {
    // OSC 52 sets the terminal's clipboard; such text may be pasted from an agent's words.
    const osc = "\x1b]52;c;aGk=\x07";
    for (
      const args of [
        [`--bogus${osc}`],
        ["--session", `s${osc}`],
        ["--state-dir", `/proc/none${osc}`],
        ["token", "revoke", `id${osc}`],
        ["onboard", `agent:x${osc}`],
      ]
    ) {
      const run = await kernelCli(box, args);
      assert.notEqual(run.code, 0, args.join(" "));
      assert.ok(
        !run.stderr.includes("\x1b") && !run.stderr.includes("\x07"),
        `${JSON.stringify(args)}: ${JSON.stringify(run.stderr)}`,
      );
      assert.ok(run.stderr.includes("\\u001b]52"), `${JSON.stringify(args)}: ${run.stderr}`);
    }
  } finally {
    await box.cleanup();
  }
});
