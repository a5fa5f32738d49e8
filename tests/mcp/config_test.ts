import assert from "node:assert/strict";
import { UsageError } from "../../src/protocol/cli_args.ts";
import { parseCommandLine } from "../../src/mcp/command_line.ts";
import { EnvReader, NO_ARGUMENTS, resolveConfig } from "../../src/mcp/config.ts";
import { localFlags, releaseFlags } from "../../src/mcp/permissions.ts";
import { subscriptionChannel } from "../../src/mcp/subscriptions.ts";
import { projectSession } from "../../src/protocol/project_session.ts";
import { negotiateVersion } from "../../src/mcp/server.ts";
import { helpText } from "../../src/mcp/help.ts";
import { helpText as kernelHelpText } from "../../src/kernel/cli/help.ts";
import { socketPath } from "../../src/protocol/socket_path.ts";

Deno.test("M-CLI-2: unknown flags, missing values, operands and unknown clients are usage errors", () => {
  for (
    const args of [
      ["--bogus"],
      ["--socket"],
      ["--socket", "--session", "s"],
      ["positional"],
      ["--print-config", "emacs"],
      ["--print-config"],
      ["--as-human"],
      ["--print-config", "cursor", "--as-human", "--project", "/p"],
      // not in the printed configuration: dropped silently, the agent got another kernel/session
      ["--print-config", "cursor", "--socket", "/s"],
      ["--print-config", "cursor", "--session", "work"],
      ["--print-config", "cursor", "--token", "t"],
      ["--session=work", "--print-config=vscode", "--as-human"],
    ]
  ) {
    assert.throws(() => parseCommandLine(args), UsageError, args.join(" "));
  }
});

Deno.test("M-CLI-2/4/6: help, version and print-config are actions of their own", () => {
  assert.deepEqual(parseCommandLine(["-h"]), { action: "help" });
  assert.deepEqual(parseCommandLine(["--socket", "/s", "--help"]), { action: "help" });
  assert.deepEqual(parseCommandLine(["--version"]), { action: "version" });
  assert.deepEqual(parseCommandLine(["--print-config=vscode"]), {
    action: "print-config",
    client: "vscode",
    project: undefined,
    asHuman: false,
  });
  assert.deepEqual(parseCommandLine(["--print-config", "cursor", "--project", "p"]), {
    action: "print-config",
    client: "cursor",
    project: "p",
    asHuman: false,
  });
  assert.deepEqual(parseCommandLine(["--print-config", "cursor", "--as-human"]), {
    action: "print-config",
    client: "cursor",
    project: undefined,
    asHuman: true,
  });
});

Deno.test("M-ONB-1: --project DIR when serving is the directory sent on attach", () => {
  const command = parseCommandLine(["--project", "/home/me/proj"]);
  assert.deepEqual(command, { action: "serve", flags: { project: "/home/me/proj" } });
  const config = resolveConfig({ project: "/home/me/proj" }, new EnvReader(() => {}));
  assert.equal(config.project, "/home/me/proj");
  assert.equal(resolveConfig({}, new EnvReader(() => {})).project, null);
  assert.throws(
    () => resolveConfig({ project: "relative/dir" }, new EnvReader(() => {})),
    /--project needs an absolute path when serving, got relative\/dir$/,
  );
});

Deno.test("M-ONB-1: SHOAL_PROJECT names the directory when no --project is given (issue 33)", () => {
  withEnv({ SHOAL_PROJECT: "/home/me/env-proj" }, () => {
    const env = new EnvReader(() => {});
    assert.equal(resolveConfig({}, env).project, "/home/me/env-proj");
    assert.equal(resolveConfig({ project: "/flag" }, env).project, "/flag", "the flag wins");
  });
  withEnv({ SHOAL_PROJECT: "rel" }, () => {
    assert.throws(
      () => resolveConfig({}, new EnvReader(() => {})),
      /SHOAL_PROJECT needs an absolute path when serving, got rel$/,
    );
  });
  withEnv({ SHOAL_PROJECT: "" }, () => {
    assert.equal(resolveConfig({}, new EnvReader(() => {})).project, null, "empty is unset");
  });
});

Deno.test('M-CLI-1: SHOAL_TOKEN set but empty counts as unset, and the facade says on stderr that it then acts as the local human, unconfined (a client configuration expanding an unset variable to "" lost the agent\'s token without a word)', () => {
  const warned = (vars: Record<string, string>, flags = {}) => {
    const lines: string[] = [];
    withEnv(vars, () => {
      assert.equal(resolveConfig(flags, new EnvReader((l) => lines.push(l))).token ?? null, null);
    });
    return lines;
  };
  const lines = warned({ SHOAL_TOKEN: "", SHOAL_PROJECT: "/home/me/p" });
  assert.equal(lines.length, 1, JSON.stringify(lines));
  assert.match(lines[0], /SHOAL_TOKEN is set but empty.*local human.*unconfined/);
  assert.deepEqual(warned({}), [], "unset: the human's own configuration, nothing to say");
  withEnv({ SHOAL_TOKEN: "" }, () => {
    const lines: string[] = [];
    const config = resolveConfig({ token: "t" }, new EnvReader((l) => lines.push(l)));
    assert.deepEqual([config.token, lines], ["t", []], "a --token wins, nothing to say");
  });
});

Deno.test("M-ONB-1: a project without a named session attaches to the project's own session, found on the default session's socket; a named session wins", () => {
  withEnv({ XDG_RUNTIME_DIR: "/run/user/7", SHOAL_SESSION: "" }, () => {
    const env = new EnvReader(() => {});
    const own = resolveConfig({ project: "/home/me/proj" }, env);
    assert.equal(own.session, projectSession("/home/me/proj"));
    assert.equal(own.socketSession, "default");
    assert.equal(own.socket, "/run/user/7/shoal/default.sock");
    assert.notEqual(resolveConfig({ project: "/home/me/other" }, env).session, own.session);
    const named = resolveConfig({ project: "/home/me/proj", session: "mine" }, env);
    assert.equal(named.session, "mine");
    assert.equal(named.socket, "/run/user/7/shoal/mine.sock");
    const none = resolveConfig({}, env);
    assert.equal(none.session, "default");
    assert.equal(none.socketSession, "default");
  });
});

Deno.test("M-CLI-1: flags parse in both forms, the last wins and empty values count as unset", () => {
  assert.deepEqual(parseCommandLine([]), NO_ARGUMENTS, "what the facade takes without parsing");
  assert.deepEqual(parseCommandLine(["--socket", "/s", "--session=w", "--token", ""]), {
    action: "serve",
    flags: { socket: "/s", session: "w" },
  });
  assert.deepEqual(parseCommandLine(["--", "--socket=/a", "--socket", "/b", "--token=t"]), {
    action: "serve",
    flags: { socket: "/b", token: "t" },
  });
});

Deno.test("M-CLI-1: flags win over environment; session is validated", () => {
  const env = new EnvReader(() => {});
  const config = resolveConfig({ socket: "/x/s.sock", session: "work", token: "t" }, env);
  assert.equal(config.socket, "/x/s.sock");
  assert.equal(config.session, "work");
  assert.equal(config.token, "t");
  assert.throws(() => resolveConfig({ session: "bad name" }, env), /invalid session/);
});

Deno.test("M-PERM-2/3: the permission flags are SPEC's, plus the unix: grant and PATH Deno 2.9 and M-PERM-4 need, SHOAL_PROJECT (M-ONB-1), and no net permission in the release", () => {
  assert.deepEqual(localFlags("/r/s.sock", "/bin/k", "/"), [
    "--no-prompt",
    "--allow-read=/r/s.sock,/r",
    "--allow-write=/r/s.sock",
    "--allow-net=unix:/r/s.sock",
    "--allow-run=/bin/k",
    "--allow-env=SHOAL_SOCKET,SHOAL_SESSION,SHOAL_TOKEN,SHOAL_PROJECT,SHOAL_NO_AUTOSTART,SHOAL_KERNEL,XDG_RUNTIME_DIR,TMPDIR,HOME,PATH",
    "--allow-sys=uid",
    "--v8-flags=--max-semi-space-size=1,--expose-gc,--no-turbofan,--single-threaded,--no-sparkplug",
  ]);
  assert.deepEqual(localFlags(null, "/bin/k", "/").slice(0, 2), [
    "--no-prompt",
    "--allow-run=/bin/k",
  ]);
  assert.deepEqual(releaseFlags(), [
    "--no-prompt",
    "--allow-read=/run/user,/tmp,/private/tmp,/var/folders,/private/var/folders",
    "--allow-run=shoal-kernel",
    "--allow-env=SHOAL_SOCKET,SHOAL_SESSION,SHOAL_TOKEN,SHOAL_PROJECT,SHOAL_NO_AUTOSTART,SHOAL_KERNEL,XDG_RUNTIME_DIR,TMPDIR,HOME,PATH",
    "--allow-sys=uid",
    "--v8-flags=--max-semi-space-size=1,--expose-gc,--no-turbofan,--single-threaded,--no-sparkplug",
  ], "the release holds no net permission and writes nothing: its kernel's relay connects");
});

Deno.test("M-SUB-1: subscribable URIs map to channels, others do not", () => {
  assert.equal(subscriptionChannel("shoal://events/user.build"), "user.build");
  assert.equal(subscriptionChannel("shoal://task/7"), "task.7");
  assert.equal(subscriptionChannel("shoal://task/task:7/out"), "task.7");
  assert.equal(subscriptionChannel("shoal://pty/3"), "pty.3");
  assert.equal(subscriptionChannel("shoal://pty/pty:3"), "pty.3");
  for (
    const uri of [
      "shoal://journal",
      "shoal://out/1",
      "shoal://task/7/err",
      "shoal://pty",
      "file:///x",
      "shoal://events",
      "shoal://task/007",
      "shoal://task/task:0",
      "shoal://pty/pty:01",
    ]
  ) {
    assert.equal(subscriptionChannel(uri), null, uri);
  }
});

Deno.test("M-PROTO-1: supported versions are echoed, anything else (newer ones too) gets 2025-11-25", () => {
  for (const v of ["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05", "2024-10-07"]) {
    assert.equal(negotiateVersion(v), v);
  }
  for (const v of ["2026-07-28", "1999-01-01", undefined, 5]) {
    assert.equal(negotiateVersion(v), "2025-11-25");
  }
});

const FACADE_VARS = [
  "SHOAL_SOCKET",
  "SHOAL_SESSION",
  "SHOAL_TOKEN",
  "SHOAL_NO_AUTOSTART",
  "SHOAL_KERNEL",
  "SHOAL_PROJECT",
];

/** Runs `fn` with the facade's variables set to `vars` (others unset), restoring them after. */
function withEnv(vars: Record<string, string>, fn: () => void): void {
  const saved = new Map(FACADE_VARS.map((name) => [name, Deno.env.get(name)]));
  try {
    for (const name of FACADE_VARS) Deno.env.delete(name);
    for (const [name, value] of Object.entries(vars)) Deno.env.set(name, value);
    fn();
  } finally {
    for (const [name, value] of saved) {
      if (value === undefined) Deno.env.delete(name);
      else Deno.env.set(name, value);
    }
  }
}

Deno.test("M-CLI-1: SHOAL_SOCKET, SHOAL_SESSION, SHOAL_TOKEN, SHOAL_NO_AUTOSTART and SHOAL_KERNEL are read when no flag is given", () => {
  withEnv({
    SHOAL_SOCKET: "/e/s.sock",
    SHOAL_SESSION: "envs",
    SHOAL_TOKEN: "envtoken",
    SHOAL_NO_AUTOSTART: "yes",
    SHOAL_KERNEL: "/opt/k",
  }, () => {
    const env = new EnvReader(() => {});
    assert.deepEqual(resolveConfig({}, env), {
      session: "envs",
      socketSession: "envs",
      token: "envtoken",
      socket: "/e/s.sock",
      socketProblem: null,
      socketRoot: "/",
      socketEnv: null,
      project: null,
      autostart: false,
      kernel: "/opt/k",
      searchPath: Deno.env.get("PATH") || null,
    });
    const flagged = resolveConfig({ socket: "/f/s.sock", session: "flag", token: "ft" }, env);
    assert.deepEqual([flagged.socket, flagged.session, flagged.token], [
      "/f/s.sock",
      "flag",
      "ft",
    ]);
  });
});

Deno.test("M-CLI-1: empty variables count as unset: session default, no token, autostart on, kernel shoal-kernel", () => {
  withEnv({
    SHOAL_SOCKET: "",
    SHOAL_SESSION: "",
    SHOAL_TOKEN: "",
    SHOAL_NO_AUTOSTART: "",
    SHOAL_KERNEL: "",
  }, () => {
    const config = resolveConfig({}, new EnvReader(() => {}));
    assert.equal(config.session, "default");
    assert.equal(config.token, null);
    assert.equal(config.autostart, true);
    assert.equal(config.kernel, "shoal-kernel");
    assert.match(String(config.socket), /\/shoal\/default\.sock$/, "discovered, not explicit");
    assert.throws(
      () =>
        withEnv({ SHOAL_SESSION: "bad name" }, () => resolveConfig({}, new EnvReader(() => {}))),
      /invalid session/,
    );
  });
});

Deno.test("G-SOCK-10: a discovered socket adds read access to the directories below its runtime root", () => {
  const flags = localFlags("/run/user/7/shoal/w.sock", "/bin/k", "/run/user/7");
  assert.ok(
    flags.includes("--allow-read=/run/user/7/shoal/w.sock,/run/user/7/shoal"),
    String(flags),
  );
  assert.ok(flags.includes("--allow-write=/run/user/7/shoal/w.sock"));
});

Deno.test("M-CLI-5/G-SOCK-1: each help names the default socket where this OS's rule puts it: on macOS /private/tmp/shoal-<uid>/<session>.sock, whatever XDG_RUNTIME_DIR and TMPDIR say", () => {
  for (const help of [helpText, kernelHelpText]) {
    const mac = help("darwin");
    assert.ok(mac.includes("/private/tmp/shoal-<uid>/<session>.sock"), mac);
    assert.equal(mac.includes("$XDG_RUNTIME_DIR/shoal/<session>.sock"), false, mac);
    const linux = help("linux");
    assert.ok(linux.includes("$XDG_RUNTIME_DIR/shoal/<session>.sock"), linux);
    assert.equal(linux.includes("/private/tmp"), false, linux);
  }
  // the rule itself, which the texts follow
  assert.equal(
    socketPath("s", undefined, { TMPDIR: "/t" }, 501, "darwin").path,
    "/private/tmp/shoal-501/s.sock",
  );
});
