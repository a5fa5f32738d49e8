/**
 * The warm shell (issue 10): each session's next bash is prepared ahead of time, and an exec only
 * hands its source over. These tests check it is really used, and never with stale state.
 */
import assert from "node:assert/strict";
import { kernelTest, startKernelWithAgent, type TestKernel } from "../../_support/kernel.ts";
import { exec } from "../../_support/exec.ts";
import { liveChildren, processGroup, processLive } from "../../_support/proc.ts";
import { kernelCli } from "../../_support/principals.ts";
import type { Rec } from "../../_support/rec.ts";
import { rpcError } from "../../_support/rejection.ts";
import { delay, pollUntil, waitUntil } from "../../_support/wait.ts";
import type { RpcConnection } from "../../../src/protocol/rpc_client.ts";
import { MAX_SESSIONS } from "../../../src/protocol/limits.ts";

/** Pids of the kernel's warm shells: its bash children started with the driver's `warm` argument. */
function warmShells(k: TestKernel): number[] {
  return liveChildren(k.child.pid).filter((c) => c.command.endsWith(" warm")).map((c) => c.pid);
}

/** The one warm shell of a single-session kernel, once it is there. */
async function nextWarm(k: TestKernel): Promise<number> {
  const pids = await pollUntil(() => Promise.resolve(warmShells(k)), (p) => p.length === 1);
  return pids[0];
}

/** `src` run in value position; its outcome's stdout text and pid. */
async function run(conn: RpcConnection, src: string): Promise<{ out: string; pid: number }> {
  const v = (await exec(conn, src, { position: "value" })).value as Rec;
  return { out: (v.out as Rec).v as string, pid: v.pid as number };
}

kernelTest(
  "an exec runs in the warm shell: its pid, own process group, stdin /dev/null, exact env",
  async (k) => {
    const conn = await k.attach();
    const warm = await nextWarm(k);
    assert.equal(processGroup(warm), warm);
    // waited on for over 2 s: SECONDS counts from the hand-over, not from the spawn
    await delay(2100);
    // stdin compared by device and inode (bash's test fstat()s /dev/stdin): no /proc needed
    const r = await run(
      conn,
      'echo "$$"; [ /dev/stdin -ef /dev/null ] && echo null; env | sort; echo "$SECONDS"',
    );
    assert.equal(r.pid, warm);
    const lines = r.out.split("\n");
    assert.equal(lines[0], String(warm));
    assert.equal(lines[1], "null");
    // whole seconds of the clock: a run that crosses one reads 1
    assert.ok(["0", "1"].includes(lines.at(-2)!), `SECONDS ${lines.at(-2)}`);
    const names = (await conn.request("session.env", {}) as Rec).names as string[];
    const seen = lines.slice(2, -2).map((l) => l.slice(0, l.indexOf("=")))
      .filter((n) => !["SHLVL", "_", "OLDPWD"].includes(n));
    assert.deepEqual(seen.sort(), names.filter((n) => n !== "OLDPWD").sort());
    // The next exec gets a fresh warm shell, never the one that ran.
    const again = await run(conn, "echo $$");
    assert.notEqual(again.pid, warm);
  },
);

kernelTest(
  "two connections interleaving state changes on one session always see the merged state",
  async (k) => {
    const a = await k.attach("s");
    const b = await k.attach("s");
    for (let i = 0; i < 20; i++) {
      const [set, get] = i % 2 === 0 ? [a, b] : [b, a];
      await exec(set, `export X=${i}; v=${i}; f() { echo f${i}; }; alias al='echo a${i}'`);
      assert.equal((await run(get, "echo $X $v; f; al")).out, `${i} ${i}\nf${i}\na${i}\n`);
    }
    // A background exec that merges after a later one was prepared: the prepared shell is stale.
    const task = await exec(a, "sleep 0.3; export LATE=yes", { async: true }) as Rec;
    await exec(b, "true");
    await a.request("task.await", { task: task.task, timeout_ms: 30000 });
    assert.equal((await run(b, 'echo "${LATE-}"')).out, "yes\n");
  },
);

kernelTest(
  "a cwd that is replaced or removed is never used through a stale warm shell",
  async (k) => {
    const conn = await k.attach();
    const dir = `${k.box.dir}/work`;
    await Deno.mkdir(dir);
    await exec(conn, `cd ${dir}`);
    const stale = await nextWarm(k);
    await Deno.remove(dir);
    await Deno.mkdir(dir);
    await Deno.writeTextFile(`${dir}/new-file`, "");
    const r = await run(conn, "pwd; ls");
    assert.notEqual(r.pid, stale);
    assert.equal(r.out, `${dir}\nnew-file\n`);
    assert.ok(await waitUntil(() => !processLive(stale), 10000), "the stale shell is discarded");

    await nextWarm(k);
    await Deno.remove(dir, { recursive: true });
    // A cold spawn cannot enter a missing cwd either: the exec fails as it did without warm shells.
    const e = await rpcError(exec(conn, "pwd"));
    assert.equal(e.code, -32603);
    assert.match(e.message, /cannot start bash/);
  },
);

kernelTest(
  "the next shell is prepared during a long run after a pause, after a short one, and two are kept in a burst",
  async (k) => {
    const conn = await k.attach();
    await nextWarm(k);
    await delay(200); // a pause: this run's next shell is not spawned at once (issue 33)
    // cancelled below: 3 s ran out before the checks when the kernel was held up that long
    const long = await exec(conn, "sleep 30", { async: true }) as Rec;
    const task = await pollUntil(
      () => conn.request("task.get", { task: long.task }) as Promise<Rec>,
      (t) => t.pid !== null,
    );
    // a new shell comes while it goes on (the one running it was started warm too)
    const pids = await pollUntil(
      () => Promise.resolve(warmShells(k).filter((pid) => pid !== task.pid)),
      (p) => p.length === 1,
    );
    const during = pids[0];
    const now = await conn.request("task.get", { task: long.task }) as Rec;
    assert.equal(now.state, "running");
    assert.equal((await run(conn, "echo $$")).pid, during);
    await conn.request("task.cancel", { task: long.task });
    await conn.request("task.await", { task: long.task, timeout_ms: 30000 });
    // after a short run that came after a pause, and within a burst
    await delay(200);
    const short = await run(conn, "echo $$");
    const next = await nextWarm(k);
    assert.notEqual(next, short.pid);
    // A burst (each exec sent once the one before it answered, as an agent calls) keeps two
    // ready (issue 33), the later spawned once the answer before it was on its way.
    for (let i = 0; i < 5; i++) await run(conn, "true");
    const ready = await pollUntil(() => Promise.resolve(warmShells(k)), (p) => p.length === 2);
    assert.ok(ready.includes((await run(conn, "echo $$")).pid));
  },
);

kernelTest("cancel, async tasks and task output work on a warm shell", async (k) => {
  const conn = await k.attach();
  const warm = await nextWarm(k);
  const started = await exec(conn, "echo started; sleep 30", { async: true }) as Rec;
  const task = await pollUntil(
    () => conn.request("task.get", { task: started.task }) as Promise<Rec>,
    (t) => t.pid !== null,
  );
  assert.equal(task.pid, warm);
  const out = await pollUntil(
    () => conn.request("task.output", { task: started.task }) as Promise<Rec>,
    (o) => JSON.stringify(o).includes("started"),
  );
  assert.ok(out);
  await conn.request("task.cancel", { task: started.task });
  const done = await conn.request("task.await", { task: started.task, timeout_ms: 30000 }) as Rec;
  assert.equal(done.state, "cancelled");
  assert.ok(await waitUntil(() => !processLive(warm), 10000));
  assert.equal((await run(conn, "echo ok")).out, "ok\n");
});

Deno.test("a revoked token's exec runs nothing; the session's warm shell serves the next caller", async () => {
  const { kernel: k, token } = await startKernelWithAgent("agent:w", {
    proc_spawn: ["*"],
    env_write: ["*"],
    auto_apply: "in-grant",
  });
  try {
    const agent = await k.attach("default", token);
    const human = await k.attach();
    await exec(agent, "export BY=agent");
    const warm = await nextWarm(k);
    const tokens = JSON.parse(await Deno.readTextFile(`${k.box.dir}/state/shoal/tokens.json`));
    const revoked = await kernelCli(k.box, ["token", "revoke", tokens.tokens[0].id]);
    assert.equal(revoked.code, 0, revoked.stderr);
    assert.equal((await rpcError(exec(agent, "export BY=revoked"))).code, -32030);
    const r = await run(human, "echo $BY");
    assert.equal(r.out, "agent\n");
    assert.equal(r.pid, warm);
  } finally {
    await k.cleanup();
  }
});

kernelTest(
  "back-to-back execs each run in a warm shell of their own, holding the latest state",
  async (k) => {
    const conn = await k.attach();
    const pids = new Set<number>();
    for (let i = 0; i < 10; i++) {
      await exec(conn, `export N=${i}; v=${i}`);
      const r = await run(conn, `echo "$N $v"; tr '\\0' '\\n' </proc/$$/cmdline | tail -n 1`);
      assert.equal(r.out, `${i} ${i}\nwarm\n`, `step ${i}`);
      assert.ok(!pids.has(r.pid), "a shell runs one exec only");
      pids.add(r.pid);
    }
  },
);

kernelTest("no warm shell outlives its session", async (k) => {
  const first = await k.attach("first");
  const warm = await nextWarm(k);
  first.close();
  // Opening as many other sessions as the quota allows reclaims the least recently used one.
  for (let i = 0; i < MAX_SESSIONS; i++) (await k.attach(`other${i}`)).close();
  assert.ok(await waitUntil(() => !processLive(warm), 10000), "the reclaimed session's shell");
});

kernelTest("no warm shell outlives the kernel", async (k) => {
  const pids: number[] = [];
  for (const session of ["a", "b", "c"]) {
    await exec(await k.attach(session), "true");
  }
  await waitUntil(() => warmShells(k).length === 3, 10000);
  pids.push(...warmShells(k));
  assert.equal(pids.length, 3);
  assert.equal(await k.stop(), 0);
  assert.deepEqual(pids.filter(processLive), []);
});

kernelTest(
  "a kernel stopped while its warm shells are still starting exits and leaves none",
  async (k) => {
    for (let i = 0; i < 5; i++) await k.attach(`s${i}`);
    const seen = warmShells(k);
    assert.equal(await k.stop(), 0);
    assert.deepEqual(seen.filter(processLive), []);
  },
);

kernelTest(
  "an exec after a change of what the loader reads at start (LD_*, GLIBC_TUNABLES) runs in a bash started with it",
  async (k) => {
    const conn = await k.attach();
    await nextWarm(k);
    await exec(conn, "export LD_LIBRARY_PATH=/nonexistent-lib GLIBC_TUNABLES=glibc.malloc.check=0");
    const r = await run(conn, "tr '\\0' '\\n' </proc/$$/environ | grep -E '^(LD_|GLIBC_)' | sort");
    assert.equal(r.out, "GLIBC_TUNABLES=glibc.malloc.check=0\nLD_LIBRARY_PATH=/nonexistent-lib\n");
  },
);
