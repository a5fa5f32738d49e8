// session.attach, the session views and the per-session transcript (K-ATTACH-*, K-SESS-*,
// V-REF-1), through the real kernel socket; transcript eviction on the Session itself.
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import type { RpcConnection } from "../../../src/protocol/rpc_client.ts";
import { Session } from "../../../src/kernel/session/registry.ts";
import { TRANSCRIPT_INLINE_BYTES } from "../../../src/protocol/limits.ts";
import { ShellViews } from "../../../src/kernel/session/shell_views.ts";
import { kernelTest, sharedKernel, startKernelWithAgent } from "../../_support/kernel.ts";
import { LOCAL_HUMAN } from "../../_support/principals.ts";
import type { Rec } from "../../_support/rec.ts";
import { rpcError } from "../../_support/rejection.ts";

/** A session of the local human's, with an empty shell state, outside any kernel. */
function emptySession<V>(): Session<V> {
  const state = { cwd: "/", env: new Map(), vars: new Map(), funcs: new Map(), aliases: new Map() };
  return new Session<V>("s", new ShellViews(state, LOCAL_HUMAN));
}

/**
 * The cases that only use sessions of their own share one kernel; the journal's and the session
 * quota's keep their own.
 */
const sharedCase = sharedKernel();

function attach(conn: RpcConnection, params: Rec): Promise<Rec> {
  return conn.request("session.attach", params) as Promise<Rec>;
}

function run(conn: RpcConnection, src: string): Promise<Rec> {
  return conn.request("exec", { src, position: "value" }) as Promise<Rec>;
}

function outText(reply: Rec): unknown {
  return ((reply.value as Rec).out as Rec).v;
}

sharedCase(
  "K-ATTACH-1 session defaults to default (absent or null), names must match ^[A-Za-z0-9._-]{1,64}$, client and token are typed; a refused attach keeps the previous one",
  async (_, k) => {
    const conn = await k.connect();
    assert.equal((await attach(conn, {})).session, "default");
    assert.equal(
      (await attach(conn, { session: null, token: null, client: null })).session,
      "default",
    );
    const longest = "a.b_c-D9".repeat(8);
    assert.equal(
      (await attach(conn, { session: longest, client: { kind: "x" } })).session,
      longest,
    );
    await run(conn, "export WHERE=longest");
    for (
      const bad of [
        { session: "" },
        { session: "a b" },
        { session: "x".repeat(65) },
        { session: "ü" },
        { session: 5 },
        { client: { tty: "yes" } },
        { client: { kind: 1 } },
        { token: 7 },
      ]
    ) {
      assert.equal((await rpcError(attach(conn, bad))).code, -32602, JSON.stringify(bad));
    }
    assert.equal(outText(await run(conn, "echo $WHERE")), "longest\n");
  },
);

kernelTest(
  "K-ATTACH-2 a failed token attach (-32030) leaves the connection's session and principal as they were",
  async (k) => {
    const conn = await k.connect();
    await attach(conn, { session: "work" });
    await run(conn, "export MARK=work");
    const e = await rpcError(attach(conn, { session: "other", token: "x".repeat(43) }));
    assert.equal(e.code, -32030);
    assert.equal(outText(await run(conn, "echo $MARK")), "work\n");
    const rows = await conn.request("journal.query", { limit: 1 }) as Rec[];
    assert.deepEqual([rows[0].session, rows[0].principal], ["work", LOCAL_HUMAN]);
  },
);

kernelTest(
  "K-ATTACH-3/E-2 at most 64 live (attached) sessions (-32040 sessions/64, the attachment unchanged); a new session starts at the kernel's cwd with an empty transcript; attach replaces the previous attachment",
  async (k) => {
    // Sessions stay live while attached (E-3 reclaims unattached ones when the quota is reached).
    for (let i = 0; i < 63; i++) await attach(await k.connect(), { session: `s${i}` });
    const conn = await k.connect();
    await attach(conn, { session: "s63" });
    await run(conn, "echo in-s63");
    const e = await rpcError(attach(conn, { session: "s64" }));
    assert.equal(e.code, -32040);
    assert.deepEqual(e.data, { quota: "sessions", limit: 64 });
    assert.equal(
      ((await conn.request("value.get", { ref: "out:1" }) as Rec).value as Rec).$,
      "outcome",
    );
    // Existing sessions can still be joined.
    const s0 = await attach(conn, { session: "s0" });
    assert.deepEqual(s0.cwd, { display: k.box.dir });
    assert.equal((await rpcError(conn.request("value.get", { ref: "out:1" }))).code, -32004);
    assert.deepEqual(await conn.request("session.cwd", {}), { cwd: { display: k.box.dir } });
  },
);

sharedCase(
  "K-ATTACH-4 env_hash is sha256 of the sorted NAME=VALUE\\0 pairs of the exported environment and follows exports",
  async (_, k) => {
    const conn = await k.connect();
    const expected = async () => {
      const env = (await conn.request("session.env", {}) as Rec).env as Record<string, string>;
      const hash = createHash("sha256");
      for (const name of Object.keys(env).sort()) hash.update(`${name}=${env[name]}\0`);
      return `sha256:${hash.digest("hex")}`;
    };
    const first = await attach(conn, { session: "h" });
    assert.equal(first.env_hash, await expected());
    assert.deepEqual(first.channels, ["session.transcript", "journal", "approval", "render"]);
    assert.deepEqual(first.kernel, { name: "shoal-kernel", version: "0.1.0" });
    assert.equal(first.ast_lang, "bash");
    await run(conn, "export ZZ_NEW='a b'");
    const second = await attach(conn, { session: "h" });
    assert.notEqual(second.env_hash, first.env_hash);
    assert.equal(second.env_hash, await expected());
  },
);

sharedCase("K-SESS-3 session.reef is a constant stub", async (conn) => {
  assert.deepEqual(await conn.request("session.reef", {}), { active_scope: null, bindings: [] });
  assert.deepEqual(await conn.request("session.reef", { scope: "x" }), {
    active_scope: null,
    bindings: [],
  });
});

sharedCase(
  "V-REF-1 out:N is numbered per session from 1 in completion order; another session's out/1 is a different value",
  async (_, k) => {
    const a = await k.attach("a");
    const b = await k.attach("b");
    assert.equal((await run(a, "echo a1")).ref, "out:1");
    assert.equal((await run(a, "echo a2")).ref, "out:2");
    assert.equal((await run(b, "echo b1")).ref, "out:1");
    const fromA = await a.request("value.get", { ref: "out:1", path: "out" }) as Rec;
    const fromB = await b.request("value.get", { ref: "out:1", path: "out" }) as Rec;
    assert.deepEqual([fromA.value, fromB.value], [{ $: "str", v: "a1\n" }, {
      $: "str",
      v: "b1\n",
    }]);
  },
);

Deno.test("V-REF-1 a session keeps the newest 1000 values; older refs are -32004 and numbers are never reused", () => {
  const session = emptySession<number>();
  for (let i = 1; i <= 1001; i++) assert.equal(session.record(i * 10), i);
  const e = (() => {
    try {
      session.lookup("out:1");
    } catch (err) {
      return err as { code: number; data: unknown };
    }
    throw new Error("out:1 is still there");
  })();
  assert.equal(e.code, -32004);
  assert.deepEqual(e.data, { ref: "out:1" });
  assert.deepEqual(session.lookup("out:2"), { n: 2, value: 20 });
  assert.deepEqual(session.lookup("out:1001"), { n: 1001, value: 10010 });
  assert.equal(session.record(0), 1002);
  for (const bad of ["out:0", "out:x", "task:2", "out:-1", "out:02", "out:+2", "out:2.0"]) {
    assert.throws(() => session.lookup(bad), (err: { code?: number }) => err.code === -32004, bad);
  }
});

Deno.test(
  "K-SESS-1 env_read of every name ('*') grants a token principal every value, under the names it lists",
  async () => {
    const { kernel, token } = await startKernelWithAgent("agent:e", {
      proc_spawn: ["*"],
      env_read: ["*"],
      auto_apply: "in-grant",
    });
    try {
      const conn = await kernel.attach("default", token);
      const env = await conn.request("session.env", {}) as Rec;
      assert.equal(env.granted, true);
      assert.deepEqual(Object.keys(env.env as Rec), env.names);
    } finally {
      await kernel.cleanup();
    }
  },
);

Deno.test("issue 33: past TRANSCRIPT_INLINE_BYTES of output the oldest values are spilled, the newest kept; evicted ones count no more", () => {
  const session = emptySession<string>();
  const quarter = TRANSCRIPT_INLINE_BYTES / 4;
  const spill = (i: number) => ({ bytes: quarter, spilled: () => `spilled ${i}` });
  for (let i = 1; i <= 6; i++) session.record(`value ${i}`, spill(i));
  const values = () => [1, 2, 3, 4, 5, 6].map((n) => session.lookup(`out:${n}`).value);
  assert.deepEqual(values(), [
    "spilled 1",
    "spilled 2",
    "value 3",
    "value 4",
    "value 5",
    "value 6",
  ]);
  for (let i = 7; i <= 1006; i++) session.record(`value ${i}`);
  session.record("value 1007", spill(1007)); // out:1..7 evicted
  assert.equal(session.lookup("out:1007").value, "value 1007");
  assert.equal(session.lookup("out:8").value, "value 8");
  assert.throws(() => session.lookup("out:3"), (err: { code?: number }) => err.code === -32004);
});
