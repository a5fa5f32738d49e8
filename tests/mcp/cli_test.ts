/** M-CLI-2/4/5/6 and issue 11: the client command as users run it, one process, and its CLI. */
import assert from "node:assert/strict";
import { localFlags } from "../../src/mcp/permissions.ts";
import { VERSION } from "../../src/protocol/version.ts";
import { converse, INITIALIZE } from "../_support/converse.ts";
import { allPids, commandLine, kernelPid, parentPid, psField } from "../_support/proc.ts";
import { hostTest, LINUX_SOCKET_RULE } from "../_support/host.ts";
import { DARWIN_RULE, KERNEL_BIN, REPO, type Sandbox, sandbox } from "../_support/sandbox.ts";
import { RawFacade } from "../_support/facade.ts";
import { exists } from "../_support/paths.ts";

/** Runs `command args` to completion in `env` (nothing else); its status and output. */
async function run(command: string, args: string[], env: Record<string, string>) {
  const out = await new Deno.Command(command, { args, env, clearEnv: true, stdin: "null" })
    .output();
  const text = new TextDecoder();
  return { code: out.code, stdout: text.decode(out.stdout), stderr: text.decode(out.stderr) };
}

function childrenOf(pid: number): number[] {
  return allPids().filter((p) => {
    try {
      return parentPid(p) === pid;
    } catch {
      return false; // exited meanwhile
    }
  });
}

async function withBox(fn: (box: Sandbox) => Promise<void>): Promise<void> {
  const box = await sandbox();
  try {
    await fn(box);
  } finally {
    await box.cleanup();
  }
}

Deno.test("issue 11: bin/shoal-mcp is one Deno process, the facade under exactly M-PERM-2's flags, beside only the kernel it autostarts", async () => {
  await withBox(async (box) => {
    const facade = new RawFacade(box);
    try {
      assert.equal(
        (await facade.request(1, "initialize", INITIALIZE.params)).result !== undefined,
        true,
      );
      const exec = await facade.request(2, "tools/call", {
        name: "shoal_exec",
        arguments: { src: "echo one" },
      });
      assert.equal((exec.result as { isError?: boolean }).isError, false);
      const pid = facade.facadePid();
      const argv = commandLine(pid)!.split(" ");
      assert.match(psField(pid, "comm")!, /(^|\/)deno$/);
      const flags = localFlags(box.socket(), KERNEL_BIN, box.socketRoot);
      assert.deepEqual(argv.slice(1), [
        "run",
        ...flags,
        "--no-config",
        "--no-lock",
        "--no-code-cache",
        `${REPO}/main.ts`,
      ]);
      assert.deepEqual(childrenOf(pid), [kernelPid(box.socket())], "only the kernel beside it");
      assert.deepEqual(facade.junk, []);
    } finally {
      await facade.stop();
    }
  });
});

/** The flags the facade started by `facade` runs under (its argv between `run` and `--no-config`). */
function facadeFlags(facade: RawFacade): string[] {
  const argv = commandLine(facade.facadePid())!.split(" ");
  return argv.slice(2, argv.indexOf("--no-config"));
}

hostTest(
  "issue 11: a kept flag answer is reused only for the same command line and environment",
  LINUX_SOCKET_RULE,
  async () => {
    await withBox(async (a) => {
      await withBox(async (b) => {
        const starts: [Sandbox, string[], string][] = [
          [a, [], "default"],
          [a, [], "default"], // the same inputs again: the kept answer
          [b, [], "default"], // another XDG_RUNTIME_DIR
          [a, ["--session", "other"], "other"], // another command line
        ];
        for (const [box, args, session] of starts) {
          const facade = new RawFacade(box, args, { SHOAL_NO_AUTOSTART: "1" });
          try {
            assert.ok((await facade.request(1, "initialize", INITIALIZE.params)).result);
            assert.deepEqual(
              facadeFlags(facade),
              localFlags(box.socket(session), KERNEL_BIN, `${box.dir}/run`),
            );
          } finally {
            await facade.stop();
          }
        }
      });
    });
  },
);

Deno.test("M-CLI-4/5: --version prints one line, --help names every option, variable, default path and the logs; both exit 0", async () => {
  await withBox(async (box) => {
    const version = await run(`${REPO}/bin/shoal-mcp`, ["--version"], box.env());
    assert.deepEqual([version.code, version.stdout, version.stderr], [
      0,
      `shoal-mcp ${VERSION}\n`,
      "",
    ]);
    for (const flag of ["-h", "--help"]) {
      const help = await run(`${REPO}/bin/shoal-mcp`, [flag], box.env());
      assert.equal(help.code, 0);
      assert.match(
        help.stdout,
        /^usage: shoal-mcp \[--socket PATH\] \[--session NAME\] \[--token TOKEN\]/,
      );
      for (
        const word of [
          "--socket",
          "--session",
          "--token",
          "--version",
          "--help",
          "--print-config",
          "--project",
          "--as-human",
          "claude-desktop",
          "SHOAL_SOCKET",
          "SHOAL_SESSION",
          "SHOAL_TOKEN",
          "SHOAL_PROJECT",
          "SHOAL_KERNEL",
          "SHOAL_NO_AUTOSTART",
          "XDG_RUNTIME_DIR",
          "$XDG_RUNTIME_DIR/shoal/<session>.sock",
          "/tmp/shoal-<uid>/shoal/<session>.sock",
          "~/.local/state/shoal",
          "kernel.log",
          // the session's default with a project (M-ONB-1), not `default`
          "the project's own session, <dir name>-<8 hex digits>; else default",
        ]
      ) {
        assert.ok(help.stdout.includes(word), word);
      }
    }
  });
});

Deno.test("M-CLI-2/K-CLI-3: a usage or provisioning error repeats the argument with its controls as \\u escapes, not raw for the terminal to run", async () => {
  await withBox(async (box) => {
    const osc = "\x1b]52;c;aGk=\x07"; // sets the terminal's clipboard
    for (
      const args of [
        [`--bogus${osc}`],
        ["--session", `s${osc}`],
        ["--print-config", "claude-desktop", "--project", `${box.dir}/none${osc}`],
      ]
    ) {
      const out = await run(`${REPO}/bin/shoal-mcp`, args, box.env());
      assert.notEqual(out.code, 0, args.join(" "));
      assert.ok(
        !out.stderr.includes("\x1b") && !out.stderr.includes("\x07"),
        `${JSON.stringify(args)}: ${JSON.stringify(out.stderr)}`,
      );
      assert.ok(out.stderr.includes("\\u001b]52"), `${JSON.stringify(args)}: ${out.stderr}`);
    }
  });
});

/** The command and PATH a printed `--as-human` configuration names. */
function parsePrinted(client: string, text: string): { command: string; path: string } {
  if (client === "claude-code") {
    const words = text.trim().split(" ");
    assert.deepEqual(words.slice(0, 5), ["claude", "mcp", "add", "shoal", "--env"]);
    assert.equal(words[6], "--");
    assert.equal(words.length, 8);
    return { command: words[7], path: words[5].replace(/^PATH=/, "") };
  }
  const config = JSON.parse(text);
  const server = client === "vscode" ? config.servers.shoal : config.mcpServers.shoal;
  if (client === "vscode") assert.equal(server.type, "stdio");
  assert.deepEqual(server.args, []);
  assert.deepEqual(Object.keys(server.env), ["PATH"]);
  return { command: server.command, path: server.env.PATH };
}

Deno.test("M-CLI-6: --print-config --as-human prints, per client, absolute existing paths and a PATH that finds the kernel, and warns", async () => {
  await withBox(async (box) => {
    for (const client of ["claude-desktop", "claude-code", "vscode", "cursor"]) {
      const printed = await run(
        `${REPO}/bin/shoal-mcp`,
        ["--print-config", client, "--as-human"],
        box.env(),
      );
      assert.equal(printed.code, 0, printed.stderr);
      assert.match(printed.stderr, /warning: --as-human: .*acts as you: unconfined/);
      assert.equal(exists(`${box.dir}/home/.config/shoal`), false, "no policy written");
      const { command, path } = parsePrinted(client, printed.stdout);
      assert.equal(command, `${REPO}/bin/shoal-mcp`);
      const dirs = path.split(":");
      for (const dir of dirs) {
        assert.ok(dir.startsWith("/") && Deno.statSync(dir).isDirectory, `${client}: ${dir}`);
      }
      assert.equal(dirs[0], `${REPO}/bin`, "the kernel next to shoal-mcp comes first");
      // what a terminal finds, a client's minimal environment lacks: /usr/local/bin before /usr/bin
      assert.deepEqual(dirs.slice(-3), ["/usr/local/bin", "/usr/bin", "/bin"]);
      assert.ok(dirs.some((d) => Deno.statSync(`${d}`).isDirectory && exists(`${d}/deno`)));
    }
  });
});

Deno.test("M-CLI-6/M-ONB-1: a checkout whose path holds a space and a non-ASCII letter prints its own existing paths, not URL-escaped ones, and provisions the agent", async () => {
  await withBox(async (box) => {
    // this checkout's files, at a path such as ~/My Projects/shoal or /home/José/shoal
    const copy = `${box.dir}/My Projects/José/shoal`;
    await Deno.mkdir(copy, { recursive: true });
    const files = ["bin", "scripts", "src", "main.ts", "deno.json", "deno.lock"];
    const cp = await new Deno.Command("cp", { args: ["-R", ...files, copy], cwd: REPO }).output();
    assert.ok(cp.success);
    await Deno.symlink(`${REPO}/.tools`, `${copy}/.tools`); // the pinned Deno, no install
    await Deno.mkdir(`${box.dir}/proj`);
    for (const extra of [["--as-human"], ["--project", `${box.dir}/proj`]]) {
      const printed = await run(
        `${copy}/bin/shoal-mcp`,
        ["--print-config", "cursor", ...extra],
        box.env(),
      );
      assert.equal(printed.code, 0, printed.stderr);
      const server = JSON.parse(printed.stdout).mcpServers.shoal;
      assert.equal(server.command, `${copy}/bin/shoal-mcp`, extra[0]);
      assert.equal(server.env.PATH.split(":")[0], `${copy}/bin`);
    }
  });
});

Deno.test("M-CLI-6: the printed configuration works under a client's minimal environment: autostart and exec", async () => {
  await withBox(async (box) => {
    const printed = await run(
      `${REPO}/bin/shoal-mcp`,
      ["--print-config", "claude-desktop", "--as-human"],
      box.env(),
    );
    const { command, path } = parsePrinted("claude-desktop", printed.stdout);
    // What Claude Desktop passes: HOME and the configured env (DENO_DIR only so Deno finds its
    // cache offline; XDG_RUNTIME_DIR, or SHOAL_SOCKET on macOS, keeps the socket inside the sandbox).
    const env = {
      HOME: `${box.dir}/home`,
      PATH: path,
      XDG_RUNTIME_DIR: `${box.dir}/run`,
      ...(DARWIN_RULE ? { SHOAL_SOCKET: box.socket() } : {}),
    };
    const exec = { name: "shoal_exec", arguments: { src: "echo minimal" } };
    const paths = { name: "shoal_exec", arguments: { src: 'printf %s "$PATH"' } };
    const { code, frames, stderr } = await converse(
      command,
      [],
      { ...env, DENO_DIR: box.env().DENO_DIR },
      [
        INITIALIZE,
        { jsonrpc: "2.0", id: 2, method: "tools/call", params: exec },
        { jsonrpc: "2.0", id: 3, method: "tools/call", params: paths },
      ],
    );
    assert.equal(code, 0, stderr);
    const text = (id: number) =>
      (frames.get(id)?.result as { content?: { text?: string }[] } | undefined)?.content?.[0]?.text;
    assert.equal(text(2), "minimal", stderr);
    // the commands run with the printed PATH as it is (bin/shoal-mcp put its bin/ first again)
    assert.equal(text(3), path, stderr);
    assert.ok(exists(box.socket()), "the kernel was autostarted on the discovered socket");
  });
});

Deno.test("issue 11: the client command works with no Deno on PATH (scripts/deno.sh supplies it)", async () => {
  await withBox(async (box) => {
    const env = box.env({ PATH: "/usr/bin:/bin" });
    const cert = Deno.env.get("NODE_EXTRA_CA_CERTS"); // lets npm through this machine's proxy
    if (cert !== undefined) env.NODE_EXTRA_CA_CERTS = cert;
    const version = await run(`${REPO}/bin/shoal-mcp`, ["--version"], env);
    assert.equal(version.code, 0, version.stderr);
    assert.equal(version.stdout, `shoal-mcp ${VERSION}\n`);
  });
});

Deno.test("issue 11: when npm cannot install the pinned Deno, scripts/deno.sh shows npm's error and what to do", async () => {
  await withBox(async (box) => {
    // a checkout without .tools/ on a machine without Deno, whose npm cannot reach its registry
    await Deno.mkdir(`${box.dir}/clone/scripts`, { recursive: true });
    await Deno.copyFile(`${REPO}/scripts/deno.sh`, `${box.dir}/clone/scripts/deno.sh`);
    const npm = (Deno.env.get("PATH") ?? "").split(":").find((dir) => exists(`${dir}/npm`));
    if (npm === undefined) return; // no npm here: nothing installs
    const out = await run("/bin/sh", [`${box.dir}/clone/scripts/deno.sh`, "--version"], {
      PATH: `${npm}:/usr/bin:/bin`,
      HOME: `${box.dir}/home`,
      npm_config_registry: "http://127.0.0.1:9/",
      npm_config_fetch_retries: "0",
      npm_config_cache: `${box.dir}/npm-cache`,
    });
    assert.notEqual(out.code, 0);
    assert.equal(out.stdout, "");
    assert.match(out.stderr, /ECONNREFUSED/, "npm's own reason");
    assert.match(out.stderr, /shoal: npm could not install deno \S+/, out.stderr);
  });
});

Deno.test("M-START-3: a kernel that exits at its start is reported with the command that shows why (its stderr is null)", async () => {
  await withBox(async (box) => {
    const failing = `${box.dir}/failing-kernel`;
    await Deno.writeTextFile(failing, "#!/bin/sh\necho 'cannot fetch a package' >&2\nexit 1\n");
    await Deno.chmod(failing, 0o755);
    const facade = new RawFacade(box, [], { SHOAL_KERNEL: failing });
    try {
      await facade.send(INITIALIZE);
      await facade.next((f) => "id" in f);
      await facade.send({
        jsonrpc: "2.0",
        id: 2,
        method: "tools/call",
        params: { name: "shoal_pty_list" },
      });
      const call = await facade.response(2);
      await facade.stop();
      assert.equal(
        (call.error as { message: string }).message,
        "kernel unavailable: the autostarted kernel exited with status 1 " +
          `(to see why, run in a terminal: ${failing} --socket ${box.socket()})`,
      );
    } finally {
      facade.kill();
    }
  });
});

Deno.test("issue 11: initialize is answered at once while the kernel autostart is still waiting", async () => {
  await withBox(async (box) => {
    // A kernel that never serves: the facade waits up to 5000 ms for it (M-START-1).
    const silent = `${box.dir}/silent-kernel`;
    await Deno.writeTextFile(silent, "#!/bin/sh\nexec sleep 30\n");
    await Deno.chmod(silent, 0o755);
    const facade = new RawFacade(box, [], { SHOAL_KERNEL: silent });
    try {
      // The kernel-backed call goes first; initialize must not queue behind its connect.
      await facade.send({
        jsonrpc: "2.0",
        id: 2,
        method: "tools/call",
        params: { name: "shoal_pty_list" },
      });
      await facade.send(INITIALIZE);
      const first = await facade.next((f) => "id" in f);
      assert.equal(first.id, 1, "initialize is answered first");
      assert.equal((first.result as { protocolVersion: string }).protocolVersion, "2025-06-18");
      const call = await facade.response(2);
      const { stderr } = await facade.stop();
      assert.match(
        (call.error as { message: string }).message,
        /^kernel unavailable: the autostarted kernel did not accept connections within 5000 ms/,
      );
      assert.equal(stderr.split("\n").filter((l) => l.includes("kernel unavailable")).length, 1);
    } finally {
      facade.kill();
    }
  });
});
