import assert from "node:assert/strict";
import { HEX } from "../../_support/bytes.ts";
import {
  kernelTest,
  sharedKernel,
  startKernelWithPolicy,
  withKernel,
} from "../../_support/kernel.ts";
import { LOCAL_HUMAN } from "../../_support/principals.ts";
import { exec } from "../../_support/exec.ts";
import type { Rec } from "../../_support/rec.ts";
import { rpcError } from "../../_support/rejection.ts";

/** The cases that read no other session's rows (the journal is the kernel's) share one kernel. */
const sharedCase = sharedKernel();

sharedCase("echo hi is an ok outcome with out:N and a bounded render (K-EXEC-3)", async (conn) => {
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

sharedCase(
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

sharedCase(
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

sharedCase(
  "a killed or failing exec leaves the session state unchanged (K-BASH-6)",
  async (conn) => {
    await exec(conn, "cd /tmp");
    await rpcError(exec(conn, "cd /usr; kill -9 $$"));
    assert.deepEqual((await conn.request("session.cwd", {}) as Rec).cwd, { display: "/tmp" });
    assert.equal((await rpcError(exec(conn, "if true; then echo"))).code, -32001);
  },
);

sharedCase("JSON stdout becomes typed values: echo 42 is an int (K-BASH-10)", async (conn) => {
  const r = await exec(conn, "echo 42");
  assert.deepEqual((r.value as Rec).out, { $: "int", v: 42 });
  const t = await exec(conn, `echo '[{"name":"a","size":1},{"name":"b"}]'`);
  const out = (t.value as Rec).out as Rec;
  assert.equal(out.$, "table");
  assert.equal(out.n, 2);
  assert.deepEqual(Object.keys(out.cols as Rec), ["name", "size"]);
});

sharedCase(
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

sharedCase("unknown refs are -32004 and bad paths -32005 (K-VAL-5)", async (conn) => {
  assert.equal((await rpcError(conn.request("value.get", { ref: "out:999" }))).code, -32004);
  const r = await exec(conn, "echo 42");
  const bad = await rpcError(conn.request("value.get", { ref: r.ref, path: "out.nope" }));
  assert.equal(bad.code, -32005);
  assert.equal((await rpcError(conn.request("exec", { src: "x", position: "nope" }))).code, -32602);
});

sharedCase(
  "stdin is /dev/null and a background child holding the pipe does not hold the exec (K-BASH-1, K-BASH-3)",
  async (conn) => {
    const r = await exec(conn, "cat; echo done; sleep 30 &", { position: "value" });
    assert.deepEqual((r.value as Rec).out, { $: "str", v: "done\n" });
    // The exec finished although `sleep 30` (same process group) still holds stdout; reap it.
    Deno.kill(-((r.value as Rec).pid as number), "SIGKILL");
  },
);

sharedCase(
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

sharedCase(
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

withKernel(
  "K-EXEC-1 every param is validated: src, mode, position, async/background, timeout_ms 1..2147483647, elide non-negative integers, plan_ref → -32602, and nothing runs",
  async (conn) => {
    for (
      const params of [
        {},
        { src: 5 },
        { src: "true", mode: "dry" },
        { src: "true", position: "expr" },
        { src: "true", async: "yes" },
        { src: "true", background: 1 },
        { src: "true", timeout_ms: 0 },
        { src: "true", timeout_ms: 2147483648 },
        { src: "true", timeout_ms: 1.5 },
        { src: "true", timeout_ms: "10" },
        { src: "true", elide: [] },
        { src: "true", elide: { max_bytes: -1 } },
        { src: "true", elide: { max_rows: 1.5 } },
        { src: "true", elide: { max_items: "3" } },
        { src: "true", plan_ref: 5 },
      ]
    ) {
      const e = await rpcError(conn.request("exec", params));
      assert.equal(e.code, -32602, JSON.stringify(params));
    }
    assert.deepEqual(await conn.request("journal.query", {}), []);
    const edge = await exec(conn, "echo 1", {
      timeout_ms: 2147483647,
      position: null,
      elide: { max_bytes: 0, max_rows: 0, max_items: null },
      unknown_member: true,
    });
    assert.equal(edge.ref, "out:1");
    assert.equal(((edge.value as Rec).out as Rec).$, "ref");
  },
);

withKernel(
  "K-EXEC-2 a syntax error is -32001 and leaves no journal row, no transcript value and no task",
  async (conn) => {
    const e = await rpcError(exec(conn, "if true; then echo", { async: true }));
    assert.equal(e.code, -32001);
    assert.deepEqual(await conn.request("journal.query", {}), []);
    assert.deepEqual(await conn.request("task.list", {}), []);
    assert.equal((await exec(conn, "true")).ref, "out:1");
  },
);

sharedCase(
  "K-EXEC-4 the -32002 stderr is the first 4096 bytes as lossy UTF-8 (a cut character becomes U+FFFD)",
  async (conn) => {
    const e = await rpcError(
      exec(
        conn,
        "head -c 4095 /dev/zero | tr '\\0' a >&2; printf '\\342\\202\\254\\377tail' >&2; exit 3",
      ),
    );
    assert.equal(e.code, -32002);
    const data = e.data as Rec;
    assert.equal(data.status, 3);
    assert.equal(data.stderr, "a".repeat(4095) + "\uFFFD");
    const invalid = await rpcError(exec(conn, "printf 'x\\377y' >&2; false"));
    assert.equal((invalid.data as Rec).stderr, "x\uFFFDy");
    const stored = await conn.request("value.get", {
      ref: data.ref,
      path: "err",
      elide: { max_bytes: 65536 },
    }) as Rec;
    assert.equal((stored.value as Rec).$, "bytes", "the stored stderr itself is not altered");
  },
);

sharedCase(
  "K-BASH-9 cmd is the source cut to 256 scalars plus … when longer (astral characters count once)",
  async (conn) => {
    const exact = ": " + "é".repeat(254);
    assert.equal(((await exec(conn, exact)).value as Rec).cmd, exact);
    const long = ": " + "𝄞".repeat(300);
    const cmd = ((await exec(conn, long)).value as Rec).cmd as string;
    assert.equal(cmd, ": " + "𝄞".repeat(254) + "…");
    assert.equal([...cmd].length, 257);
    const events = await conn.request("events.read", { channel: "session.transcript" }) as Rec;
    const last = (events.events as Rec[]).at(-1)!.payload as Rec;
    assert.equal((last.summary as Rec).cmd, cmd);
  },
);

kernelTest(
  "V-RENDER-2 tty:true keeps ANSI escapes in exec, value.get and render_head renders; tty:false strips them; values are never altered",
  async (k) => {
    const tty = await k.connect();
    await tty.request("session.attach", { client: { kind: "test", tty: true } });
    const plain = await k.attach();
    // printf, not sed: BSD sed (macOS) reads \x1b as a plain x
    const src = "printf '\\e[31mred\\e[0m\\n'; printf '\\e[1m%s\\n' $(seq 1 3000)";
    const colored = await exec(tty, src, { position: "value" });
    assert.ok((colored.render as string).startsWith("\x1b[31mred\x1b[0m\n\x1b[1m1\n"));
    const out = (colored.value as Rec).out as Rec;
    assert.equal(out.$, "ref");
    assert.ok((out.render_head as string).startsWith("\x1b[31mred"));
    assert.ok(((out.preview as Rec).v as string).startsWith("\x1b[31mred"));
    const again = await tty.request("value.get", { ref: colored.ref, format: "render" }) as Rec;
    assert.ok((again.render as string).startsWith("\x1b[31mred"));

    const stripped = await plain.request("value.get", {
      ref: colored.ref,
      format: "render",
    }) as Rec;
    assert.ok((stripped.render as string).startsWith("red\n1\n2\n"));
    assert.ok(!(stripped.render as string).includes("\x1b"));
    const json = await plain.request("value.get", { ref: colored.ref, path: "out" }) as Rec;
    assert.ok(!((json.value as Rec).render_head as string).includes("\x1b"));
    assert.ok((((json.value as Rec).preview as Rec).v as string).startsWith("\x1b[31mred"));
    const raw = await plain.request("value.get", {
      ref: colored.ref,
      path: "out",
      format: "raw",
      elide: { max_bytes: 12 },
    }) as Rec;
    assert.equal(raw.raw, "\x1b[31mred\x1b[0m");
  },
);

sharedCase(
  "K-BASH-5 an exported value that is not UTF-8 persists byte for byte; session.env omits it (K-SESS-1); export -n and unset still apply",
  async (conn) => {
    await exec(conn, "export RAW=$'a\\xff\\x27b\\\\' BOM=$'\\xef\\xbb\\xbfz'");
    const seen = await exec(
      conn,
      `${HEX}; printf %s "$RAW" | hex; env | grep -a ^RAW= | hex; printf %s "$BOM" | hex`,
      {
        position: "value",
      },
    );
    assert.deepEqual(
      ((seen.value as Rec).out as Rec).v,
      "61ff27625c\n5241573d61ff27625c0a\nefbbbf7a\n",
    );
    const env = await conn.request("session.env", {}) as Rec;
    assert.ok(!(env.names as string[]).includes("RAW"));
    assert.ok((env.names as string[]).includes("BOM"));
    assert.equal((env.env as Rec).BOM, "\uFEFFz");
    await exec(conn, "export -n RAW");
    const local = await exec(conn, `${HEX}; env | grep -ac ^RAW=; printf %s "$RAW" | hex`, {
      position: "value",
    });
    assert.equal(((local.value as Rec).out as Rec).v, "0\n61ff27625c\n");
    await exec(conn, "export RAW; unset BOM");
    const last = await exec(conn, 'env | grep -ac ^RAW=; echo "${BOM-unset}"', {
      position: "value",
    });
    assert.equal(((last.value as Rec).out as Rec).v, "1\nunset\n");
  },
);

sharedCase(
  "W-RPC-4/K-PLAN-3 a plan.apply starts in the order its request was read among the session's execs, as an approved-mode exec does: it ran before an exec read earlier whose long source was still being analysed",
  async (conn) => {
    const plan = await exec(conn, "echo applied", { mode: "plan" });
    const first = exec(conn, `echo first\n${"true\n".repeat(50_000)}`);
    const applied = conn.request("plan.apply", { plan_ref: plan.plan_ref });
    await Promise.all([first, applied]);
    const rows = await conn.request("journal.query", {}) as Rec[];
    const id = (head: string) => rows.find((r) => (r.src as string).startsWith(head))!.id as number;
    assert.ok(id("echo first") < id("echo applied"), JSON.stringify(rows.map((r) => r.id)));
  },
);

kernelTest(
  "W-RPC-4 execs of a session start in the order their requests were read, even when the first one's analysis takes longer (bin hash of a 256 MiB program)",
  async (k) => {
    const conn = await k.attach();
    const big = `${k.box.dir}/big.bin`;
    const file = await Deno.open(big, { create: true, write: true });
    await file.truncate(256 * 1024 * 1024);
    file.close();
    await Deno.chmod(big, 0o755);
    const first = exec(conn, "./big.bin; echo first", { position: "value" });
    const second = exec(conn, "echo second", { position: "value" });
    await Promise.all([first, second]);
    const rows = await conn.request("journal.query", {}) as Rec[];
    const id = (src: string) => rows.find((r) => (r.src as string).endsWith(src))!.id as number;
    assert.ok(id("echo first") < id("echo second"), JSON.stringify(rows.map((r) => [r.id, r.src])));
  },
  () =>
    startKernelWithPolicy({
      [LOCAL_HUMAN]: {
        fs: { read: ["/**"], write: ["/**"], delete: ["/**"] },
        // A sha256 grant makes every run hash the programs it spawns (K-EFF-3, P-EVAL-1).
        proc_spawn: ["*", `sha256:${"0".repeat(64)}`],
        env_read: ["*"],
        env_write: ["*"],
        session_write: true,
        journal_read: true,
        auto_apply: "in-grant",
        opaque: "allow",
      },
    }),
);

sharedCase(
  "K-BASH-5 exporting a name bash also sets itself (HOSTNAME, OSTYPE) persists like any export; bash's own unexported values do not",
  async (conn) => {
    const before = await exec(conn, 'echo "${HOSTNAME-unset}"; env | grep -c "^OSTYPE="', {
      position: "value",
    });
    assert.equal((((before.value as Rec).out as Rec).v as string).split("\n")[1], "0");
    await exec(conn, "export HOSTNAME=box-x OSTYPE=os-x");
    const after = await exec(conn, 'env | grep -E "^(HOSTNAME|OSTYPE)=" | sort', {
      position: "value",
    });
    assert.deepEqual((after.value as Rec).out, { $: "str", v: "HOSTNAME=box-x\nOSTYPE=os-x\n" });
    const names = (await conn.request("session.env", {}) as Rec).names as string[];
    assert.ok(names.includes("HOSTNAME") && names.includes("OSTYPE"));
  },
);

withKernel(
  "a run whose cwd vanished fails with -32603 before its journal row is written: nothing ran, so the journal holds no row of it, finished or open (J-1/J-2)",
  async (conn, k) => {
    const dir = `${k.box.dir}/gone`;
    await Deno.mkdir(dir);
    await exec(conn, `cd ${dir}`);
    await Deno.remove(dir);
    const e = await rpcError(exec(conn, "echo never"));
    assert.equal(e.code, -32603);
    assert.deepEqual(await conn.request("journal.query", { head: "echo" }), []);
  },
);
