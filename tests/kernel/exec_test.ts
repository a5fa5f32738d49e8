import assert from "node:assert/strict";
import type { RpcConnection } from "../../src/protocol/rpc_client.ts";
import { withKernel } from "../_support/kernel.ts";
import type { Rec } from "../_support/rec.ts";
import { rpcError } from "../_support/rejection.ts";

function exec(conn: RpcConnection, src: string, extra: Rec = {}): Promise<Rec> {
  return conn.request("exec", { src, ...extra }) as Promise<Rec>;
}

withKernel("echo hi is an ok outcome with out:N and a bounded render (K-EXEC-3)", async (conn) => {
  const r = await exec(conn, "echo hi");
  assert.match(r.ref as string, /^out:[0-9]+$/);
  assert.equal(r.uri, `shoal://out/${(r.ref as string).slice(4)}`);
  const v = r.value as Rec;
  assert.equal(v.$, "outcome");
  assert.equal(v.ok, true);
  assert.equal(v.status, 0);
  assert.deepEqual(v.out, { $: "str", v: "hi\n" });
  assert.deepEqual(v.err, { $: "str", v: "" });
  assert.equal(v.cmd, "echo hi");
  assert.equal(r.render, "hi");
  assert.equal(typeof r.elapsed_ms, "number");
});

withKernel(
  "false: value position returns ok:false, stmt position raises -32002 with the ref (K-EXEC-4)",
  async (conn) => {
    const v = (await exec(conn, "false", { position: "value" })).value as Rec;
    assert.equal(v.ok, false);
    assert.equal(v.status, 1);
    const e = await rpcError(exec(conn, "echo oops >&2; false"));
    assert.equal(e.code, -32002);
    const data = e.data as Rec;
    assert.equal(data.code, "cmd_failed");
    assert.equal(data.status, 1);
    assert.equal(data.stderr, "oops\n");
    assert.match(data.ref as string, /^out:[0-9]+$/);
    const stored = await conn.request("value.get", { ref: data.ref, path: "err" }) as Rec;
    assert.deepEqual(stored.value, { $: "str", v: "oops\n" });
  },
);

withKernel(
  "cwd, exported env, variables and functions persist between execs (K-BASH-5, K-BASH-7)",
  async (conn) => {
    await exec(conn, "cd /usr/share && export GREETING=hi; plain=5; f() { echo fn-$1; }");
    const r = await exec(conn, "pwd; echo $GREETING $plain; f x", { position: "value" });
    assert.deepEqual((r.value as Rec).out, { $: "str", v: "/usr/share\nhi 5\nfn-x\n" });
    const cwd = await conn.request("session.cwd", {}) as Rec;
    assert.deepEqual(cwd.cwd, { display: "/usr/share" });
    await exec(conn, "unset GREETING; export A=1");
    const after = await exec(conn, 'echo "A=$A G=${GREETING-unset}"');
    assert.deepEqual((after.value as Rec).out, { $: "str", v: "A=1 G=unset\n" });
  },
);

withKernel(
  "a killed or failing exec leaves the session state unchanged (K-BASH-6)",
  async (conn) => {
    await exec(conn, "cd /tmp");
    await rpcError(exec(conn, "cd /usr; kill -9 $$"));
    assert.deepEqual((await conn.request("session.cwd", {}) as Rec).cwd, { display: "/tmp" });
    assert.equal((await rpcError(exec(conn, "if true; then echo"))).code, -32001);
  },
);

withKernel("JSON stdout becomes typed values: echo 42 is an int (K-BASH-10)", async (conn) => {
  const r = await exec(conn, "echo 42");
  assert.deepEqual((r.value as Rec).out, { $: "int", v: 42 });
  const t = await exec(conn, `echo '[{"name":"a","size":1},{"name":"b"}]'`);
  const out = (t.value as Rec).out as Rec;
  assert.equal(out.$, "table");
  assert.equal(out.n, 2);
  assert.deepEqual(Object.keys(out.cols as Rec), ["name", "size"]);
});

withKernel(
  "seq 1 70000: render ≤ 64 KiB with the marker, and a slice fetches exact characters (V-RENDER-3, V-SLICE-1)",
  async (conn) => {
    const r = await exec(conn, "seq 1 70000");
    const render = r.render as string;
    assert.ok(new TextEncoder().encode(render).length <= 65536);
    assert.match(render, new RegExp(`…\\(\\d+ more lines, fetch via ${r.uri}\\)$`));
    const out = (r.value as Rec).out as Rec;
    assert.equal(out.$, "ref");
    const full = Array.from({ length: 70000 }, (_, i) => `${i + 1}\n`).join("");
    const got = await conn.request("value.get", { ref: r.ref, path: "out", slice: [1000, 1010] });
    assert.deepEqual((got as Rec).value, { $: "str", v: full.slice(1000, 1010) });
  },
);

withKernel("unknown refs are -32004 and bad paths -32005 (K-VAL-5)", async (conn) => {
  assert.equal((await rpcError(conn.request("value.get", { ref: "out:999" }))).code, -32004);
  const r = await exec(conn, "echo 42");
  const bad = await rpcError(conn.request("value.get", { ref: r.ref, path: "out.nope" }));
  assert.equal(bad.code, -32005);
  assert.equal((await rpcError(conn.request("exec", { src: "x", position: "nope" }))).code, -32602);
});

withKernel(
  "stdin is /dev/null and a background child holding the pipe does not hold the exec (K-BASH-1, K-BASH-3)",
  async (conn) => {
    const r = await exec(conn, "cat; echo done; sleep 30 &", { position: "value" });
    assert.deepEqual((r.value as Rec).out, { $: "str", v: "done\n" });
    // The exec finished although `sleep 30` (same process group) still holds stdout; reap it.
    Deno.kill(-((r.value as Rec).pid as number), "SIGKILL");
  },
);

withKernel(
  "each exec runs in its own process group with exactly the session's exported environment (K-BASH-1)",
  async (conn) => {
    const r = await exec(conn, "ps -o pgid= -p $$; echo $$", { position: "value" });
    const [pgid, pid] = ((r.value as Rec).out as { v: string }).v.trim().split(/\s+/);
    assert.equal(pgid, pid);
    await exec(conn, "export ONLY_HERE=1");
    const env = await exec(conn, "env | grep -c '^ONLY_HERE=1$'");
    assert.deepEqual((env.value as Rec).out, { $: "int", v: 1 });
    const token = await exec(conn, 'echo "${SHOAL_TOKEN-unset}"');
    assert.deepEqual((token.value as Rec).out, { $: "str", v: "unset\n" });
  },
);

withKernel(
  "arrays, several functions and aliases persist; bash's own variables do not (K-BASH-5)",
  async (conn) => {
    await exec(
      conn,
      `arr=(a "b c"); one() { echo one; }; two() {\n  echo two\n}; alias hi='echo alias-hi'`,
    );
    const r = await exec(conn, 'echo "${arr[1]}"; one; two; hi', { position: "value" });
    assert.deepEqual((r.value as Rec).out, { $: "str", v: "b c\none\ntwo\nalias-hi\n" });
    await exec(conn, "unset -f one; unalias hi; IFS=:");
    const after = await exec(
      conn,
      'type one >/dev/null 2>&1 || echo gone; alias hi 2>/dev/null || echo no-alias; printf "%q\\n" "$IFS"',
      {
        position: "value",
      },
    );
    assert.deepEqual((after.value as Rec).out, { $: "str", v: "gone\nno-alias\n$' \\t\\n'\n" });
  },
);
