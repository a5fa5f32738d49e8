// The state directory's tmp/ removed under a running kernel (G-STATE-2, J-4): a user cleaning
// what looks like a temporary directory must not leave every later exec failing until restart.
import assert from "node:assert/strict";
import { exec } from "../../_support/exec.ts";
import { hostTest, NEEDS_TIER_B } from "../../_support/host.ts";
import { startKernelWithAgent, withKernel } from "../../_support/kernel.ts";
import { dirAgent } from "../../_support/principals.ts";
import type { Rec } from "../../_support/rec.ts";
import { removeTree } from "../../_support/remove_tree.ts";

withKernel(
  "G-STATE-2/J-4 tmp/ removed while the kernel runs is made again at the next exec: small, spooled and background outputs are stored as before, in sessions with warm shells and idle scratch directories, and tmp/ is 0700 again",
  async (conn, k) => {
    const state = `${k.box.dir}/state/shoal`;
    await exec(conn, "echo before");
    await exec(conn, "cd / && echo moved");
    // other sessions leave warm shells and idle scratch directories in tmp/
    for (const s of ["a", "b", "c"]) {
      const other = await k.attach(s);
      await Promise.all([1, 2, 3].map((i) => exec(other, `echo ${i}`)));
    }
    removeTree(`${state}/tmp`);
    for (let i = 0; i < 3; i++) {
      const small = await exec(conn, `echo small-${i}; echo err >&2`);
      assert.deepEqual((small.value as Rec).out, { $: "str", v: `small-${i}\n` });
      // over the 64 KiB held in memory: spooled under tmp/ and renamed into cas/
      const big = await exec(conn, "seq 1 300000", { position: "value" });
      assert.equal(((big.value as Rec).out as Rec).n, 1_988_895);
    }
    const { task } = await exec(conn, "seq 1 200000", { async: true });
    const done = await conn.request("task.await", { task, timeout_ms: 30000 }) as Rec;
    assert.equal(done.state, "completed", JSON.stringify(done));
    assert.equal(Deno.statSync(`${state}/tmp`).mode! & 0o777, 0o700);
    // the journal recorded every run since as finished and ok, with its stdout stored
    const rows = await conn.request("journal.query", { limit: 7 }) as Rec[];
    assert.equal(rows.length, 7);
    for (const row of rows) {
      assert.equal(row.ok, true, JSON.stringify(row));
      const [stdout] = row.outputs as Rec[];
      const blob = await conn.request("blob.get", { hash: stdout.hash, length: 1 }) as Rec;
      assert.equal(blob.len, stdout.len);
    }
  },
);

withKernel(
  "G-STATE-2 tmp/ removed, then made again by a run in flight storing its output, before the next exec of a session with a warm shell: that exec still runs, in a new shell, not as a failed command",
  async (conn, k) => {
    const others = await Promise.all(["a", "b"].map((s) => k.attach(s)));
    for (const other of others) await Promise.all([1, 2, 3].map((i) => exec(other, `echo ${i}`)));
    await exec(conn, "echo warm");
    const bg = await k.attach("bg");
    const { task } = await exec(bg, "sleep 1; seq 1 300000", { async: true });
    removeTree(`${k.box.dir}/state/shoal/tmp`);
    await bg.request("task.await", { task, timeout_ms: 30000 });
    assert.ok(Deno.statSync(`${k.box.dir}/state/shoal/tmp`).isDirectory, "the run made tmp/ again");
    for (let i = 0; i < 2; i++) {
      const r = await exec(conn, `echo after-${i}`);
      assert.deepEqual((r.value as Rec).out, { $: "str", v: `after-${i}\n` });
    }
  },
);

hostTest(
  "G-STATE-2/P-SBX-4 tmp/ removed while a sandboxed agent's resident sandbox and a sandboxed PTY live: the agent's next execs and PTYs start in a new sandbox instead of failing until restart",
  NEEDS_TIER_B,
  async () => {
    const { kernel: k, token } = await startKernelWithAgent("agent:a", (box) => dirAgent(box.dir));
    try {
      const conn = await k.attach("s", token);
      await exec(conn, `cd ${k.box.dir} && echo in`);
      await conn.request("pty.open", { cmd: "bash" });
      removeTree(`${k.box.dir}/state/shoal/tmp`);
      for (let i = 0; i < 2; i++) {
        const r = await exec(conn, `echo again-${i}; seq 1 100000 | tail -n 1`);
        assert.deepEqual((r.value as Rec).out, { $: "str", v: `again-${i}\n100000\n` });
      }
      const pty = await conn.request("pty.open", { cmd: "bash" }) as Rec;
      assert.match(String(pty.pty_id), /^pty:/);
      const other = await k.attach("t", token);
      assert.deepEqual(((await exec(other, "echo t")).value as Rec).out, { $: "str", v: "t\n" });
    } finally {
      await k.cleanup();
    }
  },
);

hostTest(
  "G-STATE-2/P-NET-2 tmp/ removed while a sandboxed agent with a network grant has its sandbox: its next exec reaches the granted destination again (the proxy's socket lived in tmp/)",
  NEEDS_TIER_B,
  async () => {
    const service = Deno.listen({ hostname: "127.0.0.1", port: 0 });
    const port = (service.addr as Deno.NetAddr).port;
    const serving = (async () => {
      for await (const conn of service) {
        await conn.write(new TextEncoder().encode("pong\n")).catch(() => {});
        conn.close();
      }
    })().catch(() => {});
    const { kernel: k, token } = await startKernelWithAgent(
      "agent:n",
      (box) => ({ ...dirAgent(box.dir), net_connect: [`127.0.0.1:${port}`] }),
    );
    try {
      const conn = await k.attach("s", token);
      await exec(conn, `cd ${k.box.dir}`);
      const py = `python3 -c "import socket; print(socket.create_connection(` +
        `('127.0.0.1', ${port}), 3).recv(10).decode(), end='')" 2>&1`;
      const fetch = async () => {
        const r = await exec(conn, `eval "$(echo ${btoa(py)} | base64 -d)"`, {
          position: "value",
        });
        return ((r.value as Rec).out as Rec).v;
      };
      assert.equal(await fetch(), "pong\n");
      removeTree(`${k.box.dir}/state/shoal/tmp`);
      assert.equal(await fetch(), "pong\n");
    } finally {
      service.close();
      await serving;
      await k.cleanup();
    }
  },
);
