// The kernel daemon's command line, socket discovery and preparation, state files and shutdown,
// through the real `bin/shoal-kernel` (K-CLI-1, G-SOCK-*, G-STATE-*).
import assert from "node:assert/strict";
import { RpcConnection } from "../../../src/protocol/rpc_client.ts";
import { converse, INITIALIZE } from "../../_support/converse.ts";
import { hostTest, LINUX_SOCKET_RULE } from "../../_support/host.ts";
import {
  collectLines,
  kernelUntilExit,
  launchKernel,
  spawnKernel,
  startKernel,
} from "../../_support/kernel.ts";
import { kernelCli } from "../../_support/principals.ts";
import type { Rec } from "../../_support/rec.ts";
import { KERNEL_BIN, REPO, type Sandbox, sandbox } from "../../_support/sandbox.ts";
import { waitUntil } from "../../_support/wait.ts";

const UID = Deno.uid()!;
const asRoot = UID === 0;

/** Runs `body` with a fresh sandbox, removed afterwards. */
async function withBox(body: (box: Sandbox) => Promise<void>): Promise<void> {
  const box = await sandbox();
  try {
    await body(box);
  } finally {
    await box.cleanup();
  }
}

/** Permission bits of a path (not following a final symlink). */
async function mode(path: string): Promise<number> {
  return (await Deno.lstat(path)).mode! & 0o777;
}

Deno.test("K-CLI-1 usage errors exit 2 with the usage text; a bash older than 4.4 or a missing one is fatal (exit 1)", async () => {
  await withBox(async (box) => {
    for (
      const args of [
        ["--bogus"],
        ["serve", "--socket"],
        ["--session", "a b"],
        ["serve", "extra"],
      ]
    ) {
      const r = await kernelUntilExit(box, args);
      assert.equal(r.code, 2, `${args.join(" ")}: ${r.stderr}`);
      assert.match(r.stderr, /usage: shoal-kernel/);
    }
    const old = `${box.dir}/old-bash`;
    await Deno.writeTextFile(old, '#!/bin/sh\necho "4 3"\n');
    await Deno.chmod(old, 0o755);
    const tooOld = await kernelUntilExit(box, ["--socket", box.socket(), "--bash", old]);
    assert.equal(tooOld.code, 1, tooOld.stderr);
    assert.match(tooOld.stderr, /4\.4 or later/);
    const missing = await kernelUntilExit(box, [
      "--socket",
      box.socket(),
      "--bash",
      "/nonexistent",
    ]);
    assert.equal(missing.code, 1, missing.stderr);
    assert.doesNotMatch(missing.stderr + tooOld.stderr, /ready/);
  });
});

hostTest(
  "K-CLI-1 a leading -- is ignored and `serve` is optional; --session picks the discovered socket (G-SOCK-1 rule 2)",
  LINUX_SOCKET_RULE,
  async () => {
    await withBox(async (box) => {
      const socket = box.socket("work");
      const k = await launchKernel(box, ["--", "serve", "--session", "work"], socket);
      try {
        const conn = await k.connect();
        const r = await conn.request("session.attach", {}) as Rec;
        // --session selects only the socket path; the attach still defaults to `default`.
        assert.equal(r.session, "default");
        assert.equal(await k.stop(), 0);
      } finally {
        await k.stop();
      }
    });
  },
);

hostTest(
  "G-SOCK-1 rule 3: without XDG_RUNTIME_DIR the socket is $TMPDIR/shoal-<uid>/shoal/S.sock (trailing / ignored), in 0700 directories, and the CLI finds it the same way (G-SOCK-2, G-SOCK-3)",
  LINUX_SOCKET_RULE,
  async () => {
    await withBox(async (box) => {
      const tmp = `${box.dir}/tmp`;
      await Deno.mkdir(tmp, { mode: 0o755 });
      await Deno.chmod(tmp, 0o755);
      const env = { XDG_RUNTIME_DIR: "", TMPDIR: `${tmp}/` };
      const socket = `${tmp}/shoal-${UID}/shoal/default.sock`;
      const k = await launchKernel(box, [], socket, env);
      try {
        assert.equal(await mode(socket), 0o600);
        assert.equal(await mode(`${tmp}/shoal-${UID}`), 0o700);
        assert.equal(await mode(`${tmp}/shoal-${UID}/shoal`), 0o700);
        assert.equal(await mode(`${socket}.lock`), 0o600);
        assert.equal(await mode(tmp), 0o755, "an existing ancestor keeps its mode");
        const listed = await kernelCli(box, ["approvals"], env);
        assert.equal(listed.code, 0, listed.stderr);
        assert.deepEqual(JSON.parse(listed.stdout), { requests: [] });
      } finally {
        await k.stop();
      }
    });
  },
);

Deno.test("G-SOCK-1/2 started without XDG_RUNTIME_DIR and TMPDIR (as MCP clients start programs), the kernel, its CLI and the facade agree on /tmp/shoal-<uid>/shoal/S.sock (Linux) or /private/tmp/shoal-<uid>/S.sock (macOS)", async () => {
  await withBox(async (box) => {
    // A session of its own: this path is shared with every other program of this user.
    const session = `t-${crypto.randomUUID().slice(0, 8)}`;
    const socket = Deno.build.os === "darwin"
      ? `/private/tmp/shoal-${UID}/${session}.sock`
      : `/tmp/shoal-${UID}/shoal/${session}.sock`;
    const env = { XDG_RUNTIME_DIR: "", TMPDIR: "" };
    const k = await launchKernel(box, ["--session", session], socket, env);
    try {
      assert.equal(await mode(socket), 0o600);
      const listed = await kernelCli(box, ["approvals", "--session", session], env);
      assert.equal(listed.code, 0, listed.stderr);
      assert.deepEqual(JSON.parse(listed.stdout), { requests: [] });
      const exec = { name: "shoal_exec", arguments: { src: "echo agreed" } };
      const facade = await converse(
        `${REPO}/bin/shoal-mcp`,
        [],
        box.env({ ...env, SHOAL_SESSION: session, SHOAL_NO_AUTOSTART: "1" }),
        [INITIALIZE, { jsonrpc: "2.0", id: 2, method: "tools/call", params: exec }],
      );
      const result = facade.frames.get(2)?.result as { content?: { text?: string }[] };
      assert.equal(result?.content?.[0]?.text, "agreed", facade.stderr);
    } finally {
      await k.stop();
      await Deno.remove(`${socket}.lock`).catch(() => {});
    }
  });
});

Deno.test("G-SOCK-3 step 1: an existing socket directory of ours with group or other bits is set to 0700", async () => {
  await withBox(async (box) => {
    const dir = `${box.dir}/open`;
    await Deno.mkdir(dir);
    await Deno.chmod(dir, 0o755);
    const k = await launchKernel(box, ["--socket", `${dir}/k.sock`], `${dir}/k.sock`);
    try {
      assert.equal(await mode(dir), 0o700);
    } finally {
      await k.stop();
    }
  });
});

Deno.test({
  name:
    "G-SOCK-3 step 2/G-SOCK-10: a socket directory owned by another uid is refused (exit 1) and left as it is, for default discovery and for an explicit path",
  ignore: !asRoot,
  fn: async () => {
    await withBox(async (box) => {
      const foreign = `${box.dir}/run/shoal`;
      await Deno.mkdir(foreign, { recursive: true });
      await Deno.chmod(foreign, 0o755);
      await Deno.chown(foreign, 65534, 65534);
      const refused = await kernelUntilExit(box, []);
      assert.equal(refused.code, 1, refused.stderr);
      assert.match(refused.stderr, /owned by uid 65534/);
      assert.equal(await mode(foreign), 0o755);

      const socket = `${foreign}/explicit.sock`;
      const explicit = await kernelUntilExit(box, ["--socket", socket]);
      assert.equal(explicit.code, 1, explicit.stderr);
      assert.match(explicit.stderr, new RegExp(`${foreign} is owned by uid 65534`));
      assert.equal(await mode(foreign), 0o755);
      await assert.rejects(Deno.lstat(socket), Deno.errors.NotFound);
    });
  },
});

Deno.test("G-SOCK-3 step 4: a live listener that is no kernel makes the kernel exit 3 without touching the path", async () => {
  await withBox(async (box) => {
    const socket = `${box.dir}/live.sock`;
    const listener = Deno.listen({ transport: "unix", path: socket });
    const accepting = (async () => {
      for await (const conn of listener) conn.close();
    })().catch(() => {});
    try {
      const r = await kernelUntilExit(box, ["--socket", socket]);
      assert.equal(r.code, 3, r.stderr);
      assert.match(r.stderr, /another kernel owns/);
      (await Deno.connect({ transport: "unix", path: socket })).close();
    } finally {
      listener.close();
      await accepting;
    }
  });
});

Deno.test({
  name: "G-SOCK-3 step 4: a stale socket owned by another uid is refused with exit 1",
  ignore: !asRoot,
  fn: async () => {
    await withBox(async (box) => {
      const socket = `${box.dir}/stale.sock`;
      // A socket file with no listener behind it (closing a Deno listener would unlink it).
      await new Deno.Command("python3", {
        args: ["-c", "import socket,sys; socket.socket(socket.AF_UNIX).bind(sys.argv[1])", socket],
      }).output();
      await Deno.chown(socket, 65534, 65534);
      const r = await kernelUntilExit(box, ["--socket", socket]);
      assert.equal(r.code, 1, r.stderr);
      assert.match(r.stderr, /owned by uid 65534/);
      assert.ok((await Deno.lstat(socket)).isSocket);
    });
  },
});

Deno.test("G-SOCK-8 shutdown leaves a path that is no longer the socket it bound", async () => {
  await withBox(async (box) => {
    const k = await startKernel([], box);
    try {
      // put in its place at once: a kernel takes back a path left empty (socket_keeper.ts)
      await Deno.writeTextFile(`${k.socket}.other`, "someone else's file");
      await Deno.rename(`${k.socket}.other`, k.socket);
      assert.equal(await k.stop(), 0);
      assert.equal(await Deno.readTextFile(k.socket), "someone else's file");
    } finally {
      await k.stop();
    }
  });
});

Deno.test("G-SOCK-9/K-ATTACH-3 a SHOAL_TOKEN in the kernel's environment reaches no session and no child", async () => {
  await withBox(async (box) => {
    const k = await startKernel([], box, { SHOAL_TOKEN: "leaked-secret" });
    try {
      const conn = await k.attach();
      const env = await conn.request("session.env", {}) as Rec;
      assert.ok(!(env.names as string[]).includes("SHOAL_TOKEN"));
      assert.ok((env.names as string[]).includes("HOME"));
      const r = await conn.request("exec", {
        src: 'echo "${SHOAL_TOKEN-unset}"; env | grep -c leaked-secret',
        position: "value",
      }) as Rec;
      assert.deepEqual((r.value as Rec).out, { $: "str", v: "unset\n0\n" });
    } finally {
      await k.stop();
    }
  });
});

Deno.test("M-ONB-1/M-START-1 the SHOAL_PROJECT an autostarting facade empties (it is the facade's, not its sessions') reaches no session: env showed the agent SHOAL_PROJECT= among its variables", async () => {
  await withBox(async (box) => {
    const k = await startKernel([], box, { SHOAL_PROJECT: "" });
    try {
      const conn = await k.attach();
      const env = await conn.request("session.env", {}) as Rec;
      assert.ok(!(env.names as string[]).includes("SHOAL_PROJECT"));
      const r = await conn.request("exec", {
        src: 'echo "${SHOAL_PROJECT-unset}"',
        position: "value",
      }) as Rec;
      assert.deepEqual((r.value as Rec).out, { $: "str", v: "unset\n" });
    } finally {
      await k.stop();
    }
  });
});

Deno.test("G-STATE-1/G-STATE-4 under umask 000 the state dir and its missing parents are 0700, every file the kernel makes there 0600; kernel.log has the ready line (G-STATE-2)", async () => {
  await withBox(async (box) => {
    const state = `${box.dir}/deep/er/state`;
    const previous = Deno.umask(0);
    let k;
    try {
      // the CLI, its own process under umask 000, makes the state dir
      const made = await kernelCli(box, ["token", "create", "agent:x", "t", "--state-dir", state]);
      assert.equal(made.code, 0, made.stderr);
      k = await startKernel(["--state-dir", state], box);
    } finally {
      Deno.umask(previous);
    }
    try {
      const conn = await k.attach();
      await conn.request("exec", { src: "seq 1 30000; echo warn >&2", position: "value" });
      await conn.request("events.publish", { channel: "user.x", payload: 1 });
      assert.equal(await mode(`${box.dir}/deep`), 0o700);
      assert.equal(await mode(`${box.dir}/deep/er`), 0o700);
      const seen: string[] = [];
      const walk = async (dir: string): Promise<void> => {
        assert.equal(await mode(dir), 0o700, dir);
        for await (const entry of Deno.readDir(dir)) {
          const path = `${dir}/${entry.name}`;
          if (entry.isDirectory) await walk(path);
          else {
            seen.push(path.slice(state.length + 1));
            assert.equal(await mode(path), 0o600, path);
          }
        }
      };
      await walk(state);
      for (const name of ["journal.db", "kernel.log", "tokens.json"]) {
        assert.ok(seen.includes(name), `${name} not in ${seen.join(" ")}`);
      }
      assert.ok(seen.some((p) => p.startsWith("cas/")), seen.join(" "));
      assert.match(await Deno.readTextFile(`${state}/kernel.log`), /shoal-kernel: ready /);
    } finally {
      await k.stop();
    }
  });
});

Deno.test("G-TOPO-4 a kernel out of file descriptors keeps running: it serves the connections it has and accepts again once some close", async () => {
  await withBox(async (box) => {
    const socket = box.socket();
    const child = spawnKernel(box, ["--socket", socket], {}, [
      "sh",
      "-c",
      'ulimit -n 48 && exec "$0" "$@"',
      KERNEL_BIN,
    ]);
    const stderr: string[] = [];
    const reading = collectLines(child.stderr, stderr);
    try {
      assert.ok(await waitUntil(() => stderr.some((l) => l.includes("ready")), 30000));
      const flood: Deno.UnixConn[] = [];
      for (let i = 0; i < 60; i++) {
        flood.push(await Deno.connect({ transport: "unix", path: socket }));
      }
      assert.ok(
        await waitUntil(() => stderr.some((l) => l.includes("cannot accept connections")), 10000),
        stderr.join("\n"),
      );
      for (const conn of flood) conn.close();
      const conn = await RpcConnection.connect(socket);
      assert.equal((await conn.request("parse", { src: "true" }) as Rec).ast_lang, "bash");
      conn.close();
    } finally {
      try {
        child.kill("SIGTERM");
      } catch {
        // it died: the status below says how
      }
      const status = await child.status;
      await reading;
      assert.equal(status.code, 0, stderr.join("\n"));
    }
  });
});
