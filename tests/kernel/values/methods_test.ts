// Issue 3 through the real kernel over its real socket: bounded capture, typed values, elision,
// value.get paths/slices/raw chunks, blob.get, and the session views.
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import type { RpcConnection } from "../../../src/protocol/rpc_client.ts";
import { byteLength } from "../../_support/bytes.ts";
import {
  sharedKernel,
  startKernel,
  startKernelWithAgent,
  withKernel,
} from "../../_support/kernel.ts";
import { kernelPid, memoryKiB, peakKiB } from "../../_support/proc.ts";
import { exec } from "../../_support/exec.ts";
import type { Rec } from "../../_support/rec.ts";
import { rpcError } from "../../_support/rejection.ts";
import { concatBytes } from "../../../src/protocol/concat_bytes.ts";
import { VALUE_NODE_LIMIT } from "../../../src/protocol/limits.ts";

const encoder = new TextEncoder();
const MiB = 1024 * 1024;
/** The cases that measure no kernel memory share one kernel, each on a session of its own. */
const sharedCase = sharedKernel();

function valueGet(conn: RpcConnection, params: Rec): Promise<Rec> {
  return conn.request("value.get", params) as Promise<Rec>;
}

function outOf(reply: Rec): Rec {
  return (reply.value as Rec).out as Rec;
}

/** Follows `next` from offset 0 and concatenates the decoded chunks of a raw value.get. */
async function fetchRaw(
  conn: RpcConnection,
  params: Rec,
  check: (chunk: Rec) => void,
): Promise<Uint8Array> {
  const parts: Uint8Array[] = [];
  let offset: number | null = 0;
  while (offset !== null) {
    const chunk = await valueGet(conn, { ...params, format: "raw", offset });
    check(chunk);
    assert.equal(chunk.offset, offset);
    const data = "raw" in chunk
      ? encoder.encode(chunk.raw as string)
      : Uint8Array.from(atob(chunk.raw_base64 as string), (c) => c.charCodeAt(0));
    assert.equal(data.length, chunk.len);
    parts.push(data);
    offset = chunk.next as number | null;
    if (offset !== null) assert.equal(offset, (chunk.offset as number) + (chunk.len as number));
  }
  return concatBytes(parts);
}

function sha256(bytes: Uint8Array): string {
  return createHash("sha256").update(bytes).digest("hex");
}

sharedCase(
  "2,000,000 ints with json.dumps default separators (16.9 MB > 16 MiB) are a str, not a list: SPEC's parse bound wins (K-BASH-10)",
  async (conn) => {
    const r = await exec(
      conn,
      `python3 -c 'import json;print(json.dumps(list(range(2000000))))'`,
    );
    const out = outOf(r);
    assert.equal(out.$, "ref");
    assert.equal(out.of, "str");
    const len = byteLength(
      JSON.stringify(Array.from({ length: 2000000 }, (_, i) => i)).replaceAll(
        ",",
        ", ",
      ),
    ) + 1;
    assert.ok(len > 16 * MiB);
    assert.equal(out.n, len);
    const got = await valueGet(conn, { ref: r.ref, path: "out", slice: [0, 12] });
    assert.deepEqual(got.value, { $: "str", v: "[0, 1, 2, 3," });
  },
);

withKernel(
  "512 MiB of stdout raise the kernel's resident memory by less than 64 MiB (K-BASH-11)",
  async (conn, k) => {
    const pid = kernelPid(k.socket);
    const before = memoryKiB(pid);
    let sampled = before.rss;
    let running = true;
    const sampler = (async () => {
      while (running) {
        sampled = Math.max(sampled, memoryKiB(pid).rss);
        await new Promise((r) => setTimeout(r, 25));
      }
    })();
    let r: Rec;
    try {
      r = await exec(conn, "head -c 536870912 /dev/zero | tr '\\0' a");
    } finally {
      running = false;
      await sampler;
    }
    const growthMiB = (peakKiB(pid, before, sampled) - before.rss) / 1024;
    assert.ok(growthMiB < 64, `kernel RSS grew by ${growthMiB.toFixed(1)} MiB`);
    const out = outOf(r);
    assert.equal(out.$, "ref");
    assert.equal(out.of, "str");
    assert.equal(out.n, 536870912);
    const got = await valueGet(conn, { ref: r.ref, path: "out", slice: [536870900, 536871000] });
    assert.deepEqual(got.value, { $: "str", v: "a".repeat(12) });
  },
);

sharedCase(
  "an array of objects is a columnar table; .out.rows[1].size is null and .out.name[0] is a (V-JSON-1, V-PATH-2/3)",
  async (conn) => {
    const r = await exec(conn, `echo '[{"name":"a","size":1},{"name":"b"}]'`);
    assert.deepEqual(outOf(r), {
      $: "table",
      cols: {
        name: [{ $: "str", v: "a" }, { $: "str", v: "b" }],
        size: [{ $: "int", v: 1 }, { $: "null" }],
      },
      n: 2,
    });
    const size = await valueGet(conn, { ref: r.ref, path: ".out.rows[1].size" });
    assert.deepEqual(size.value, { $: "null" });
    const name = await valueGet(conn, { ref: r.ref, path: ".out.name[0]" });
    assert.deepEqual(name.value, { $: "str", v: "a" });
    const row = await valueGet(conn, { ref: r.ref, path: "out[1]" });
    assert.deepEqual(row.value, {
      $: "record",
      v: { name: { $: "str", v: "b" }, size: { $: "null" } },
    });
  },
);

sharedCase(
  "bad paths, slices of scalars and raw of non-strings are -32005; unknown refs -32004 (K-VAL-5)",
  async (conn) => {
    const r = await exec(conn, "echo 42");
    const ref = r.ref as string;
    for (
      const params of [
        { ref, path: "out." },
        { ref, path: "out[" },
        { ref, path: "out[0]" },
        { ref, path: "out.nope" },
        { ref, path: "out", slice: [0, 1] },
        { ref, path: "status", slice: [0, 1] },
        { ref, path: "out", format: "raw" },
      ]
    ) {
      const e = await rpcError(valueGet(conn, params));
      assert.equal(e.code, -32005, JSON.stringify(params));
      assert.equal((e.data as Rec).ref, ref);
    }
    const t = await exec(conn, `echo '[{"name":"a"}]'`);
    assert.equal((await rpcError(valueGet(conn, { ref: t.ref, path: "out[5]" }))).code, -32005);
    assert.equal((await rpcError(valueGet(conn, { ref: "out:999" }))).code, -32004);
    assert.equal((await rpcError(valueGet(conn, { ref: "out:999", path: "out" }))).code, -32004);
    assert.equal((await rpcError(valueGet(conn, { ref, slice: [-1, 2] }))).code, -32602);
    assert.equal((await rpcError(valueGet(conn, { ref, format: "yaml" }))).code, -32602);
  },
);

sharedCase(
  "format raw on a 10 MiB str: each chunk ≤ 65536 bytes with total and next, and following next reassembles the exact bytes (K-VAL-4)",
  async (conn) => {
    // Multi-byte characters make chunk ends fall inside characters, which must move back.
    const script = `import sys
line = "línea € 😀 {}\\n"
out = []
n = 0
i = 0
while n < 10 * 1024 * 1024:
    s = line.format(i)
    out.append(s)
    n += len(s.encode())
    i += 1
sys.stdout.buffer.write("".join(out).encode())`;
    const r = await exec(conn, `python3 -c '${script.replaceAll("'", "'\\''")}'`);
    let expected = "";
    for (let i = 0, n = 0; n < 10 * MiB; i++) {
      const s = `línea € 😀 ${i}\n`;
      expected += s;
      n += byteLength(s);
    }
    const want = encoder.encode(expected);
    assert.equal(outOf(r).of, "str");
    let chunks = 0;
    const got = await fetchRaw(conn, { ref: r.ref, path: "out" }, (chunk) => {
      chunks++;
      assert.equal(chunk.total, want.length);
      assert.ok(
        (chunk.len as number) <= 65536 && (chunk.len as number) >= 65536 - 3 ||
          chunk.next === null,
      );
      assert.ok(byteLength(chunk.raw) <= 65536);
    });
    assert.ok(chunks >= want.length / 65536);
    assert.equal(got.length, want.length);
    assert.equal(sha256(got), sha256(want));
    const small = await valueGet(conn, {
      ref: r.ref,
      path: "out",
      format: "raw",
      offset: 1,
      elide: { max_bytes: 10 },
    });
    assert.deepEqual(small, {
      ref: r.ref,
      raw: "ínea € ",
      offset: 1,
      len: 10,
      total: want.length,
      next: 11,
    });
    const inside = await rpcError(
      valueGet(conn, { ref: r.ref, path: "out", format: "raw", offset: 2 }),
    );
    assert.equal(inside.code, -32005);
    const beyond = await rpcError(
      valueGet(conn, { ref: r.ref, path: "out", format: "raw", offset: want.length + 1 }),
    );
    assert.equal(beyond.code, -32005);
  },
);

sharedCase(
  "a bytes value comes back as bounded raw_base64 chunks that reassemble exactly; blob.get serves the journal's stdout hash by range (K-VAL-4, K-BLOB-1..3)",
  async (conn, k) => {
    const r = await exec(conn, "head -c 100000 /dev/urandom > rand.bin && cat rand.bin");
    const want = await Deno.readFile(`${k.box.dir}/rand.bin`);
    const out = outOf(r);
    assert.equal(out.$, "ref");
    assert.equal(out.of, "bytes");
    assert.equal(out.n, 100000);
    const got = await fetchRaw(conn, { ref: r.ref, path: "out" }, (chunk) => {
      assert.ok("raw_base64" in chunk);
      assert.equal(chunk.total, 100000);
      assert.ok((chunk.len as number) <= 65536);
    });
    assert.deepEqual(got, want);

    const rows = await conn.request("journal.query", { head: "head", limit: 1 }) as Rec[];
    assert.equal(rows.length, 1);
    const stdout = (rows[0].outputs as Rec[]).find((o) => o.kind === "stdout")!;
    assert.equal(stdout.hash, `sha256:${sha256(want)}`);
    assert.equal(stdout.len, 100000);
    const parts: Uint8Array[] = [];
    let offset: number | null = 0;
    while (offset !== null) {
      const b = await conn.request("blob.get", {
        hash: stdout.hash,
        offset,
        length: 30000,
      }) as Rec;
      assert.equal(b.len, 100000);
      const value = b.value as Rec;
      const data = value.$ === "bytes"
        ? Uint8Array.from(atob(value.v as string), (c) => c.charCodeAt(0))
        : encoder.encode(value.v as string);
      assert.ok(data.length <= 30000);
      parts.push(data);
      offset = b.next as number | null;
    }
    assert.deepEqual(concatBytes(parts), want);
    const bare = await conn.request("blob.get", {
      hash: (stdout.hash as string).slice(7),
      offset: 99990,
    }) as Rec;
    // The rest in one chunk, or (random bytes read as UTF-8 ending inside a character, V-CHUNK-1)
    // up to that character: next then names it.
    assert.ok(bare.next === null || (bare.next as number) > 99990, String(bare.next));
    assert.equal(bare.offset, 99990);
    const unknown = await rpcError(conn.request("blob.get", { hash: "0".repeat(64) }));
    assert.equal(unknown.code, -32004);
    const past = await rpcError(conn.request("blob.get", { hash: stdout.hash, offset: 100001 }));
    assert.equal(past.code, -32005);
    // An offset JavaScript does not hold exactly was -32005 echoing it as 1e+21 (W-NUM-1).
    for (const offset of [1e21, 2 ** 53]) {
      const huge = await rpcError(conn.request("blob.get", { hash: stdout.hash, offset }));
      assert.equal(huge.code, -32602, String(offset));
    }
    assert.equal((await rpcError(conn.request("blob.get", { hash: "sha1:ab" }))).code, -32602);
  },
);

sharedCase(
  "session.cwd follows cd; session.env lists sorted names and values for the local human (K-SESS-1/2)",
  async (conn) => {
    await exec(conn, "cd /usr/share");
    assert.deepEqual(await conn.request("session.cwd", {}), { cwd: { display: "/usr/share" } });
    await exec(conn, "cd /tmp && export ZED=last AAA=first");
    assert.deepEqual(await conn.request("session.cwd", {}), { cwd: { display: "/tmp" } });
    const env = await conn.request("session.env", {}) as Rec;
    const names = env.names as string[];
    assert.deepEqual(names, [...names].sort());
    assert.ok(names.includes("ZED") && names.includes("AAA"));
    assert.equal(env.granted, true);
    assert.equal((env.env as Rec).ZED, "last");
    assert.deepEqual(Object.keys(env.env as Rec).sort(), names);
  },
);

Deno.test("session.env discloses names but no values when env_read is not granted (K-SESS-1)", async () => {
  const { kernel, token } = await startKernelWithAgent("agent:x", {
    proc_spawn: ["*"],
    env_read: ["HOME"],
    auto_apply: "in-grant",
  });
  try {
    const conn = await kernel.attach("default", token);
    const env = await conn.request("session.env", {}) as Rec;
    assert.equal(env.granted, false);
    assert.equal("env" in env, false);
    assert.ok((env.names as string[]).includes("PATH"));
  } finally {
    await kernel.cleanup();
  }
});

sharedCase(
  "K-VAL-2/V-ELIDE-3 uris name the selection: path percent-encoded except A–Z a–z 0–9 - . _ ~ [ ], then slice=a..b; preview items get [i] suffixes",
  async (conn) => {
    const r = await exec(conn, `echo '{"a b/é":[10,20,30,40,50,60],"k":{"x":[1,2,3]}}'`);
    const n = (r.ref as string).slice(4);
    const got = await valueGet(conn, {
      ref: r.ref,
      path: 'out["a b/é"]',
      slice: [1, 4],
      elide: { max_items: 2 },
    });
    const ref = got.value as Rec;
    assert.equal(ref.$, "ref");
    assert.equal(ref.uri, `shoal://out/${n}?path=out[%22a%20b%2F%C3%A9%22]&slice=1..4`);
    assert.deepEqual((ref.preview as Rec).v, [
      { $: "int", v: 20 },
      { $: "int", v: 30 },
      { $: "int", v: 40 },
    ]);
    const nested = await valueGet(conn, { ref: r.ref, path: ".out.k.x", elide: { max_items: 0 } });
    assert.equal((nested.value as Rec).uri, `shoal://out/${n}?path=.out.k.x`);
    const whole = await valueGet(conn, { ref: r.ref, elide: { max_bytes: 10 } });
    assert.equal(((whole.value as Rec).out as Rec).uri, `shoal://out/${n}?path=out`);
    const items = (((whole.value as Rec).out as Rec).preview as Rec).v as Rec;
    assert.equal((items["a b/é"] as Rec).uri, `shoal://out/${n}?path=out[%22a%20b%2F%C3%A9%22]`);
  },
);

sharedCase(
  "a U+FEFF that starts the bytes read is data, not a byte order mark: CAS-backed str previews, slices, raw chunks and renders, blob.get, task.output, the quoted stderr and journal src keep it (V-ELIDE-5, V-SLICE-1, K-VAL-4, V-RENDER-1, K-BLOB-2, K-TASK-7, K-EXEC-4, K-JQ-4)",
  async (conn) => {
    const bom = "\ufeff";
    const r = await exec(conn, `printf '\\xef\\xbb\\xbf'; head -c 100000 /dev/zero | tr '\\0' a`);
    const out = outOf(r);
    assert.equal(out.n, 100001);
    assert.equal(((out.preview as Rec).v as string).slice(0, 3), `${bom}aa`);
    const slice = await valueGet(conn, { ref: r.ref, path: "out", slice: [0, 3] });
    assert.deepEqual(slice.value, { $: "str", v: `${bom}aa` });
    const raw = await valueGet(conn, {
      ref: r.ref,
      path: "out",
      format: "raw",
      elide: { max_bytes: 5 },
    });
    assert.deepEqual([raw.raw, raw.len, raw.next], [`${bom}aa`, 5, 5]);
    const render = await valueGet(conn, { ref: r.ref, format: "render" });
    assert.equal((render.render as string).slice(0, 3), `${bom}aa`);
    assert.equal((r.render as string).slice(0, 3), `${bom}aa`);

    const [row] = await conn.request("journal.query", { limit: 1 }) as Rec[];
    const stdout = (row.outputs as Rec[]).find((o) => o.kind === "stdout")!;
    const blob = await conn.request("blob.get", { hash: stdout.hash, length: 5 }) as Rec;
    assert.deepEqual([blob.value, blob.next], [{ $: "str", v: `${bom}aa` }, 5]);

    const task = await exec(conn, `printf '\\xef\\xbb\\xbfhi'`, { async: true });
    await conn.request("task.await", { task: task.task });
    const output = await conn.request("task.output", { task: task.task }) as Rec;
    assert.deepEqual([output.data, output.next_cursor], [`${bom}hi`, 5]);

    const raised = await rpcError(exec(conn, `printf '\\xef\\xbb\\xbfoops' >&2; false`));
    assert.equal((raised.data as Rec).stderr, `${bom}oops`);

    const src = `${bom}true`;
    await exec(conn, src, { position: "value" });
    const [last] = await conn.request("journal.query", { limit: 1 }) as Rec[];
    assert.equal(last.src, src);
  },
);

sharedCase(
  "a colour reset after the last newline of a CAS-backed str leaves no line of its own: the render's marker counts exactly the lines left out (V-RENDER-2/3)",
  async (conn) => {
    const r = await exec(conn, `seq 1 20000 | sed 's/^/line /'; printf '\\033[0m'`);
    for (
      const render of [
        r.render as string,
        (await valueGet(conn, { ref: r.ref, format: "render" })).render as string,
      ]
    ) {
      const kept = render.split("\n").length - 1;
      assert.ok(kept > 0 && kept < 20000);
      assert.ok(
        render.endsWith(`\n…(${20000 - kept} more lines, fetch via shoal://out/1)`),
        render.slice(-60),
      );
    }
  },
);

Deno.test({
  name:
    "V-ELIDE-6 the ref of a table with 5,000 columns stays within 65536 encoded bytes: V-ELIDE-6's MUST wins over V-ELIDE-5's `cols`, which a ref too large without its preview leaves out (9b8c16f; it was 159 KB)",
  fn: async () => {
    const k = await startKernel();
    try {
      const conn = await k.attach();
      const row = Object.fromEntries(
        Array.from({ length: 5000 }, (_, i) => [`column_name_number_${i}`, i]),
      );
      await Deno.writeTextFile(`${k.box.dir}/wide.json`, JSON.stringify([row]));
      const r = await exec(conn, `cat ${k.box.dir}/wide.json`);
      assert.equal(outOf(r).$, "ref");
      assert.ok(byteLength(JSON.stringify(outOf(r))) <= 65536);
    } finally {
      await k.cleanup();
    }
  },
});

Deno.test({
  name:
    "K-VAL-4 following next through a str of 4-byte characters with max_bytes 1 reaches its end [ignored: defect found by the probe round; needs a SPEC decision: K-VAL-4 moves a str chunk's end back to a character boundary and clamps the chunk size to 1..65536, so a max_bytes below the width of the character at offset gives len 0 and next == offset (printf '😀x', max_bytes 1: raw '', next 0) and a client that follows next never ends; serving that one character whole, or a minimum chunk of 4 bytes, is the SPEC's choice]",
  ignore: true,
  fn: async () => {
    const k = await startKernel();
    try {
      const conn = await k.attach();
      const r = await exec(conn, "printf '😀x'");
      const chunk = await valueGet(conn, {
        ref: r.ref,
        path: "out",
        format: "raw",
        elide: { max_bytes: 1 },
      });
      assert.notEqual(chunk.next, 0);
    } finally {
      await k.cleanup();
    }
  },
});

Deno.test(
  "K-BASH-11/K-BASH-10 a 16.5 MB stdout of one JSON list of empty objects (more containers than VALUE_NODE_LIMIT) is text, and raises the kernel's resident memory by less than 64 MiB: parsed, the transcript held ~200 bytes per object, 1 GiB per exec (found by probe17)",
  async () => {
    const k = await startKernel();
    try {
      const conn = await k.attach();
      await exec(conn, "echo warm");
      const pid = kernelPid(k.socket);
      const before = memoryKiB(pid).rss;
      const r = await exec(
        conn,
        `python3 -c 'import sys;sys.stdout.write("[1"+",{}"*5500000+"]")'`,
      );
      assert.deepEqual([outOf(r).$, outOf(r).of], ["ref", "str"]);
      const growthMiB = (memoryKiB(pid).rss - before) / 1024;
      assert.ok(growthMiB < 64, `kernel RSS grew by ${growthMiB.toFixed(0)} MiB`);
      // At the limit it is still a structured value (a list, a list in it, its records).
      const at = await exec(
        conn,
        `python3 -c 'import sys;sys.stdout.write("[[]"+",{}"*${VALUE_NODE_LIMIT - 2}+"]")'`,
      );
      assert.deepEqual([outOf(at).of, outOf(at).n], ["list", VALUE_NODE_LIMIT - 1]);
    } finally {
      await k.cleanup();
    }
  },
);

Deno.test({
  name:
    'V-TAG-1 a record\'s members and a table\'s columns travel in source order when some names look like array indices [ignored: defect found by the probe round; needs a SPEC decision: the kernel writes records and table cols as JS objects, whose JSON puts index-like names first (\'{"b":1,"0":2}\' arrives as {"0":…,"b":…}, render and wire disagree), and every JavaScript client\'s JSON.parse would reorder them again; keeping source order needs a serializer of the kernel\'s own and a different wire shape for clients, so allowing index-like names first or changing the shape of records is the SPEC\'s choice]',
  ignore: true,
  fn: async () => {
    const k = await startKernel();
    try {
      const conn = await Deno.connect({ transport: "unix", path: k.socket });
      try {
        const frames = [
          { jsonrpc: "2.0", id: 1, method: "session.attach", params: {} },
          { jsonrpc: "2.0", id: 2, method: "exec", params: { src: `echo '{"b":1,"0":2}'` } },
        ];
        await conn.write(encoder.encode(frames.map((f) => JSON.stringify(f) + "\n").join("")));
        let text = "";
        const buffer = new Uint8Array(65536);
        while (!text.includes('"id":2')) {
          const n = await conn.read(buffer);
          if (n === null) break;
          text += new TextDecoder().decode(buffer.subarray(0, n));
        }
        assert.ok(text.includes('"v":{"b":{"$":"int","v":1},"0":{"$":"int","v":2}}'), text);
      } finally {
        conn.close();
      }
    } finally {
      await k.cleanup();
    }
  },
});
