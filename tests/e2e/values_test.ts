// Issue 3 through the real stack (SDK client → shoal-mcp → autostarted kernel → bash): bounded
// tool replies with elided refs, shoal_get paths and slices, raw and blob resource reads, the
// resource templates and the session views.
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { byteLength } from "../_support/bytes.ts";
import { createToken, writePolicy } from "../_support/principals.ts";
import type { Rec } from "../_support/rec.ts";
import { sandbox } from "../_support/sandbox.ts";
import { connectMcp, mcpError, mcpTest, type ReadReply } from "./_mcp.ts";

/** The 64 KiB bound on any text handed to a client (V-RENDER-3, M-OUT-2, M-RES-5). */
const TEXT_LIMIT = 65536;

function outOf(sc: Rec): Rec {
  return (sc.value as Rec).out as Rec;
}

function outN(sc: Rec): string {
  return String(sc.ref).replace(/^out:/, "");
}

function fromBase64(b64: string): Uint8Array {
  return Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
}

function sha256(bytes: Uint8Array): string {
  return createHash("sha256").update(bytes).digest("hex");
}

/** The single text item of a read, asserting its MIME type and the 64 KiB bound. */
function textOf(r: ReadReply, mimeType: string): string {
  assert.equal(r.contents.length, 1);
  assert.equal(r.contents[0].mimeType, mimeType);
  const text = r.contents[0].text as string;
  assert.ok(byteLength(text) <= TEXT_LIMIT, `read text is ${byteLength(text)} bytes`);
  return text;
}

mcpTest(
  "seq 1 2000000: the reply text is ≤ 64 KiB, out is an elided str ref with a resource_link, and shoal_get slice [1000,1010] is exact (V-ELIDE-4, M-OUT-2/3)",
  async (mcp) => {
    const r = await mcp.call("shoal_exec", { src: "seq 1 2000000" });
    assert.equal(r.isError, false);
    const sc = r.structuredContent;
    const [text, link] = r.content;
    assert.equal(text.type, "text");
    assert.ok(byteLength(text.text) <= TEXT_LIMIT, `text is ${byteLength(text.text)} bytes`);
    assert.match(text.text as string, /…\([0-9]+ more lines, fetch via shoal:\/\/out\/[0-9]+\)$/);
    assert.ok(byteLength(sc.value) <= TEXT_LIMIT, "the elided value is bounded");
    // The elided value keeps its render beside it (M-OUT-1), all of it within 64 KiB (M-OUT-7).
    assert.equal(typeof sc.render, "string");
    assert.ok(byteLength(sc) <= TEXT_LIMIT, `structuredContent is ${byteLength(sc)} bytes`);
    assert.ok(byteLength(r) <= 3 * TEXT_LIMIT, `the reply is ${byteLength(r)} bytes`);
    assert.deepEqual(link, {
      type: "resource_link",
      uri: sc.uri,
      name: sc.ref,
      mimeType: "application/json",
    });
    const out = outOf(sc);
    assert.equal(out.$, "ref");
    assert.equal(out.of, "str");
    assert.equal(out.uri, `${sc.uri}?path=out`);
    const seq = Array.from({ length: 2000000 }, (_, i) => `${i + 1}\n`).join("");
    assert.equal(out.n, seq.length);

    const got = await mcp.ok("shoal_get", { ref: sc.ref, path: "out", slice: [1000, 1010] });
    assert.deepEqual(got.value, { $: "str", v: seq.slice(1000, 1010) });
    const tail = await mcp.ok("shoal_get", {
      ref: sc.ref,
      path: "out",
      slice: [seq.length - 8, seq.length + 100],
    });
    assert.deepEqual(tail.value, { $: "str", v: seq.slice(-8) });

    const render = await mcp.read(`shoal://out/${outN(sc)}?format=render`);
    assert.ok(textOf(render, "text/plain").startsWith("1\n2\n3\n"));
    const json = await mcp.read(`shoal://out/${outN(sc)}?path=out`);
    textOf(json, "application/json");
    assert.equal((json.structuredContent as Rec).$, "ref");
  },
);

mcpTest(
  "2,000,000 ints as compact JSON (python's default separators would pass SPEC's 16 MiB parse bound and be a str) are an elided list n=2000000; slice [1000,1010] gives items 1000..1009",
  async (mcp) => {
    const sc = await mcp.ok("shoal_exec", {
      src: `python3 -c 'import json;print(json.dumps(list(range(2000000)),separators=(",",":")))'`,
    });
    const out = outOf(sc);
    assert.equal(out.$, "ref");
    assert.equal(out.of, "list");
    assert.equal(out.n, 2000000);
    assert.deepEqual(out.preview, {
      $: "list",
      v: [0, 1, 2, 3, 4].map((v) => ({ $: "int", v })),
    });
    const got = await mcp.ok("shoal_get", { ref: sc.ref, path: "out", slice: [1000, 1010] });
    assert.deepEqual(got.value, {
      $: "list",
      v: Array.from({ length: 10 }, (_, i) => ({ $: "int", v: 1000 + i })),
    });
    const item = await mcp.ok("shoal_get", { ref: sc.ref, path: ".out[1999999]" });
    assert.deepEqual(item.value, { $: "int", v: 1999999 });
  },
);

mcpTest(
  "a table through shoal_get: .out.rows[1].size is null, .out.name[0] is a; bad path -32005 and unknown ref -32004 are isError results, and -32602 kernel errors on read (V-PATH-2, K-VAL-5, M-OUT-4, M-RES-6)",
  async (mcp) => {
    const sc = await mcp.ok("shoal_exec", { src: `echo '[{"name":"a","size":1},{"name":"b"}]'` });
    const out = outOf(sc);
    assert.equal(out.$, "table");
    assert.equal(out.n, 2);
    assert.deepEqual(Object.keys(out.cols as Rec), ["name", "size"]);
    const size = await mcp.ok("shoal_get", { ref: sc.ref, path: ".out.rows[1].size" });
    assert.deepEqual(size.value, { $: "null" });
    const name = await mcp.ok("shoal_get", { ref: sc.ref, path: ".out.name[0]" });
    assert.deepEqual(name.value, { $: "str", v: "a" });

    for (const args of [{ path: "out[" }, { path: ".out.nope" }, { path: "out[9]" }]) {
      const bad = await mcp.call("shoal_get", { ref: sc.ref, ...args });
      assert.equal(bad.isError, true, JSON.stringify(args));
      assert.equal(bad.structuredContent.code, -32005, JSON.stringify(args));
      assert.equal((bad.structuredContent.data as Rec).ref, sc.ref);
    }
    const scalar = await mcp.ok("shoal_exec", { src: "echo 42" });
    const sliced = await mcp.call("shoal_get", { ref: scalar.ref, path: "out", slice: [0, 1] });
    assert.equal(sliced.structuredContent.code, -32005);
    const unknown = await mcp.call("shoal_get", { ref: "out:999999" });
    assert.equal(unknown.isError, true);
    assert.equal(unknown.structuredContent.code, -32004);

    const readBad = await mcpError(mcp.read(`shoal://out/${outN(sc)}?path=out[`));
    assert.equal(readBad.code, -32602);
    assert.match(readBad.message, /kernel error: /);
    assert.equal((readBad.data as Rec).code, -32005);
    const readUnknown = await mcpError(mcp.read("shoal://out/999999"));
    assert.equal((readUnknown.data as Rec).code, -32004);
  },
);

mcpTest(
  "resources/read format=raw of a 10 MiB str: text/plain ≤ the raw budget with total and next, &offset= continues exactly, elide max_bytes shrinks the chunk (K-VAL-4, M-RES-5, D-FIX-3)",
  async (mcp) => {
    const total = 10 * 1024 * 1024;
    // awk, not seq: BSD seq (macOS) prints 1000000 and up as 1e+06
    const sc = await mcp.ok("shoal_exec", {
      src: `awk 'BEGIN { for (i = 1; i <= 2000000; i++) print i }' | head -c ${total}`,
    });
    const seq = Array.from({ length: 2000000 }, (_, i) => `${i + 1}\n`).join("").slice(0, total);
    const base = `shoal://out/${outN(sc)}?path=out&format=raw`;

    const first = await mcp.read(base);
    const text = textOf(first, "text/plain");
    assert.deepEqual(first.structuredContent, {
      ref: sc.ref,
      raw: text,
      offset: 0,
      len: text.length,
      total,
      next: text.length,
    });
    assert.equal(text, seq.slice(0, text.length));

    const next = (first.structuredContent as Rec).next as number;
    const second = await mcp.read(`${base}&offset=${next}`);
    const text2 = textOf(second, "text/plain");
    assert.equal(text2, seq.slice(next, next + text2.length));
    assert.equal((second.structuredContent as Rec).next, next + text2.length);

    const last = await mcp.read(`${base}&offset=${total - 5}`);
    assert.equal(textOf(last, "text/plain"), seq.slice(total - 5));
    assert.equal((last.structuredContent as Rec).next, null);

    const elide = encodeURIComponent(JSON.stringify({ max_bytes: 1000 }));
    const small = await mcp.read(`${base}&elide=${elide}`);
    assert.equal(textOf(small, "text/plain"), seq.slice(0, 1000));
    assert.equal((small.structuredContent as Rec).next, 1000);
  },
);

mcpTest(
  "a bytes value reads as a bounded blob with total/next and no unbounded base64 in structuredContent; chunks reassemble to the journal's stdout hash, and shoal://val/sha256:<hash> reads the blob (K-VAL-4, K-BLOB-2, M-RES-5)",
  async (mcp) => {
    const total = 100000;
    const sc = await mcp.ok("shoal_exec", { src: `head -c ${total} /dev/urandom` });
    assert.equal(outOf(sc).of, "bytes");
    const base = `shoal://out/${outN(sc)}?path=out&format=raw`;
    const parts: Uint8Array[] = [];
    let offset: number | null = 0;
    while (offset !== null) {
      const r: ReadReply = await mcp.read(`${base}&offset=${offset}`);
      assert.equal(r.contents.length, 1);
      assert.equal(r.contents[0].mimeType, "application/octet-stream");
      assert.equal("text" in r.contents[0], false);
      const chunk = fromBase64(r.contents[0].blob as string);
      const meta = r.structuredContent as Rec;
      assert.ok(chunk.length <= TEXT_LIMIT, `chunk of ${chunk.length} bytes`);
      assert.equal(meta.len, chunk.length);
      assert.equal(meta.offset, offset);
      assert.equal(meta.total, total);
      // The base64 of at most 64 KiB and a few numbers: never the whole value.
      assert.ok(byteLength(meta) <= Math.ceil(TEXT_LIMIT / 3) * 4 + 512);
      parts.push(chunk);
      offset = meta.next as number | null;
    }
    assert.ok(parts.length >= 2, "100000 bytes need more than one chunk");
    const all = new Uint8Array(total);
    let at = 0;
    for (const p of parts) {
      all.set(p, at);
      at += p.length;
    }
    assert.equal(at, total);

    const journal = await mcp.ok("shoal_journal", { head: "head", limit: 1 });
    const row = (journal.items as Rec[])[0];
    const stdout = (row.outputs as Rec[]).find((o) => o.kind === "stdout")!;
    assert.equal(stdout.hash, `sha256:${sha256(all)}`);
    assert.equal(stdout.len, total);

    const val = await mcp.read(`shoal://val/${stdout.hash}`);
    textOf(val, "application/json");
    const blob = val.structuredContent as Rec;
    assert.equal(blob.hash, stdout.hash);
    assert.equal(blob.len, total);
    assert.equal(blob.offset, 0);
    assert.equal((blob.value as Rec).$, "bytes");
    const head = fromBase64((blob.value as Rec).v as string);
    assert.ok(head.length <= TEXT_LIMIT);
    assert.equal(blob.next, head.length);
    assert.deepEqual(head, all.subarray(0, head.length));
    const bare = await mcp.read(`shoal://val/${(stdout.hash as string).slice(7)}`);
    assert.equal((bare.structuredContent as Rec).hash, stdout.hash);
    const missing = await mcpError(mcp.read(`shoal://val/${"0".repeat(64)}`));
    assert.equal((missing.data as Rec).code, -32004);
  },
);

mcpTest(
  "resources/templates/list is exactly SPEC's nine templates in order (M-RES-2)",
  async (mcp) => {
    const { resourceTemplates } = await mcp.client.listResourceTemplates();
    assert.deepEqual(resourceTemplates.map((t) => t.uriTemplate), [
      "shoal://out/{n}{?path,slice,format}",
      "shoal://val/{hash}",
      "shoal://task/{id}",
      "shoal://task/{id}/out{?path,slice,format}",
      "shoal://plan/{ref}",
      "shoal://session/{view}",
      "shoal://pty/{id}",
      "shoal://journal{?since,until,head,principal,ok,effects,limit}",
      "shoal://events/{channel}{?since,limit}",
    ]);
  },
);

mcpTest(
  "shoal://session/cwd is live: a cd shows at the next read (K-SESS-2, D-FIX-7)",
  async (mcp, box) => {
    const before = await mcp.read("shoal://session/cwd");
    assert.equal(textOf(before, "application/json").includes('"display"'), true);
    assert.notEqual((before.structuredContent as Rec).display, `${box.dir}/home`);
    await mcp.ok("shoal_exec", { src: `cd '${box.dir}/home'` });
    const after = await mcp.read("shoal://session/cwd");
    assert.deepEqual(after.structuredContent, { display: `${box.dir}/home` });
    await mcp.ok("shoal_exec", { src: "cd /" });
    assert.deepEqual((await mcp.read("shoal://session/cwd")).structuredContent, { display: "/" });
  },
);

mcpTest(
  "shoal://session/env: the local human gets names and values; an agent without env_read of every name gets names only (K-SESS-1)",
  async (mcp, box) => {
    await mcp.ok("shoal_exec", { src: "export SHOAL_E2E_VAR=visible" });
    const human = (await mcp.read("shoal://session/env")).structuredContent as Rec;
    assert.equal(human.granted, true);
    assert.ok((human.names as string[]).includes("SHOAL_E2E_VAR"));
    assert.equal((human.env as Rec).SHOAL_E2E_VAR, "visible");

    const agent = await connectMcp(box, {
      SHOAL_TOKEN: (await createToken(box, "agent:env", "env")).secret,
    });
    try {
      const env = (await agent.read("shoal://session/env")).structuredContent as Rec;
      assert.equal(env.granted, false);
      assert.equal("env" in env, false);
      assert.deepEqual(env.names, human.names);
    } finally {
      await agent.close();
    }
  },
  async (box) => {
    await writePolicy(`${box.dir}/config/shoal/leash.jsonc`, {
      "agent:env": { env_read: ["HOME"], proc_spawn: ["*"] },
    });
    return { XDG_CONFIG_HOME: `${box.dir}/config` };
  },
);

mcpTest(
  "the uri of a member whose name holds U+FEFF reads that member: the facade's percent-decoding keeps %EF%BB%BF as the character (M-RES-3, V-ELIDE-7)",
  async (mcp, box) => {
    const record = { "\ufeffk": "x".repeat(3000), k: "plain", m: "y".repeat(6000) };
    await Deno.writeTextFile(`${box.dir}/bom.json`, JSON.stringify(record));
    const sc = await mcp.ok("shoal_exec", { src: `cat ${box.dir}/bom.json` });
    const member = ((outOf(sc).preview as Rec).v as Rec)["\ufeffk"] as Rec;
    assert.equal(member.uri, `shoal://out/${outN(sc)}?path=out[%22%EF%BB%BFk%22]`);
    const read = await mcp.read(member.uri as string);
    assert.deepEqual(read.structuredContent, { $: "str", v: "x".repeat(3000) });
  },
);

Deno.test({
  name:
    "M-RES-4 shoal://val/<hash>?offset=65536 reads a journal output's second chunk, so an MCP client can fetch a result past its first 64 KiB after the kernel restarted [ignored: defect found by the probe round; needs a SPEC decision: M-RES-2/4 give shoal://val/{hash} no query and map it to blob.get {hash} alone, and no tool reads blobs, so once out:N is gone (restart, eviction, reclaim) only the first 65536 bytes of each journal output are reachable through MCP although blob.get answers next; an offset query parameter (as out/… has) is the SPEC's choice]",
  ignore: true,
  fn: async () => {
    const box = await sandbox();
    try {
      const mcp = await connectMcp(box);
      try {
        await mcp.ok("shoal_exec", { src: "seq 1 100000" });
        const journal = await mcp.ok("shoal_journal", { head: "seq", limit: 1 });
        const row = (journal.items as Rec[])[0];
        const stdout = (row.outputs as Rec[]).find((o) => o.kind === "stdout")!;
        const second = await mcp.read(`shoal://val/${stdout.hash}?offset=65536`);
        assert.equal((second.structuredContent as Rec).offset, 65536);
      } finally {
        await mcp.close();
      }
    } finally {
      await box.cleanup();
    }
  },
});

Deno.test({
  name:
    "M-OUT-2/3 shoal_get of a path whose complete value's pretty JSON passes 64 KiB names the selection (shoal://out/N?path=…&slice=…) in its text marker and link, so a client reading the text can fetch the rest [ignored: defect found by the probe round; needs a SPEC decision: M-OUT-3 links R.value.uri only when the value is elided, else R.ref, so the text of shoal_get {path:'out', slice:[0,3000], elide:{max_bytes:65536, max_items:5000}} (61 KB of compact JSON, 15,000 lines pretty) is cut with '…(N more lines, fetch via shoal://out/1)' and a link to the whole outcome, where the list is elided again; linking the selection's uri (as K-VAL-2 builds it) is the SPEC's choice]",
  ignore: true,
  fn: async () => {
    const box = await sandbox();
    try {
      const mcp = await connectMcp(box);
      try {
        const run = await mcp.ok("shoal_exec", {
          src: "seq 0 9999 | paste -sd, | sed 's/.*/[&]/'",
        });
        const r = await mcp.call("shoal_get", {
          ref: run.ref,
          path: "out",
          slice: [0, 3000],
          elide: { max_bytes: 65536, max_items: 5000 },
        });
        assert.equal(r.isError, false);
        assert.equal(((r.structuredContent.value as Rec).v as Rec[]).length, 3000);
        const want = `shoal://out/${outN(run)}?path=out&slice=0..3000`;
        const text = r.content[0].text as string;
        assert.ok(text.endsWith(`fetch via ${want})`), text.slice(-80));
        assert.equal(r.content[1].uri, want);
      } finally {
        await mcp.close();
      }
    } finally {
      await box.cleanup();
    }
  },
});

Deno.test({
  name:
    "M-OUT-2/V-RENDER-2 the text item of shoal_get for a str holding an 8-bit CSI (U+009B) carries it escaped, as the pretty JSON already escapes ESC [ignored: defect found by the probe round; needs a SPEC decision: M-OUT-2 makes the text the pretty JSON of structuredContent, and JSON.stringify writes ESC as \\u001b but U+0080–U+009F raw, so a str of JSON holding U+009B (`printf '\"\\302\\2332J\"'`) then shoal_get {path:'out'} hands a tty:false client a raw CSI that V-RENDER-2 strips from every render; whether text items of JSON escape C1 controls (still the same JSON) is the SPEC's choice]",
  ignore: true,
  fn: async () => {
    const box = await sandbox();
    try {
      const mcp = await connectMcp(box);
      try {
        const run = await mcp.ok("shoal_exec", { src: `printf '"\\302\\2332J\\\\u001b[2J"'` });
        const r = await mcp.call("shoal_get", { ref: run.ref, path: "out" });
        assert.equal((r.structuredContent.value as Rec).v, "\u009b2J\x1b[2J");
        const text = r.content[0].text as string;
        assert.ok(!text.includes("\x1b"), "ESC is escaped");
        assert.ok(!text.includes("\u009b"), JSON.stringify(text));
      } finally {
        await mcp.close();
      }
    } finally {
      await box.cleanup();
    }
  },
});
