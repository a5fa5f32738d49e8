// Issues 16 and 19 (item 6) through the real stack (SDK client → shoal-mcp → autostarted kernel →
// bash, PTY, policy): what clients that read only structuredContent receive. A complete value
// arrives once, an elided one keeps its render, and no tool result's structuredContent exceeds
// 65536 bytes of JSON, whatever the tool, while the ref and URI to fetch the rest stay in it.
import assert from "node:assert/strict";
import { byteLength } from "../_support/bytes.ts";
import { createToken, writePolicy } from "../_support/principals.ts";
import type { Rec } from "../_support/rec.ts";
import { pollUntil } from "../_support/wait.ts";
import { connectMcp, mcpTest, type ToolReply } from "./_mcp.ts";

/** The M-OUT-7 bound on the JSON text of structuredContent. */
const SC_LIMIT = 65536;

function textOf(r: ToolReply): string {
  return r.content[0].text as string;
}

/** Asserts the bound on `r.structuredContent` and returns it. */
function bounded(r: ToolReply, what: string): Rec {
  const size = byteLength(r.structuredContent);
  assert.ok(size <= SC_LIMIT, `${what}: structuredContent is ${size} bytes`);
  return r.structuredContent;
}

/**
 * `count` long paths below `dir`: the kernel reports at most 100 paths of at most 1024 bytes per
 * effect (K-EFF-7), so only long ones still make a plan or an error larger than M-OUT-7's bound.
 */
function longPaths(dir: string, count: number): string[] {
  const deep = ["d", "e", "f", "g"].map((c) => c.repeat(200)).join("/");
  return Array.from({ length: count }, (_, i) => `${dir}/${deep}/file-${i}`);
}

/** Asserts `sc` is M-OUT-7's truncated form of something larger than the bound, fetchable at `uri`. */
function assertTruncated(sc: Rec, uri: string | null, what: string): void {
  assert.equal(sc.truncated, true, `${what} is truncated`);
  assert.ok((sc.bytes as number) > SC_LIMIT, `${what}: bytes ${sc.bytes}`);
  assert.equal(sc.uri, uri ?? undefined, `${what}: uri`);
  const preview = sc.preview as string;
  assert.ok(preview.startsWith("{\n"), `${what}: preview is pretty JSON`);
  const marker = new RegExp(`…\\([0-9]+ more lines, fetch via ${uri ?? "ref"}\\)$`);
  assert.ok(marker.test(preview), `${what}: preview ends ${JSON.stringify(preview.slice(-60))}`);
}

mcpTest(
  "M-OUT-1: complete str, table, record and failed outcomes arrive once (no render in structuredContent, the render as text); an elided one keeps its render",
  async (mcp) => {
    const cases: [string, string][] = [
      ["echo hello", "hello"],
      [`echo '[{"a":1},{"a":2}]'`, "a\n─\n1\n2"],
      [`echo '{"a":1}'`, "a: 1"],
      ["echo out; echo oops >&2; exit 3", "out\n--- stderr ---\noops\n[exit status 3]"],
    ];
    for (const [src, render] of cases) {
      const r = await mcp.call("shoal_exec", { src });
      assert.equal(r.isError, false);
      const sc = bounded(r, src);
      assert.deepEqual(Object.keys(sc).sort(), ["elapsed_ms", "ref", "uri", "value"], src);
      assert.equal((sc.value as Rec).$, "outcome");
      assert.equal(textOf(r), render, `${src}: content keeps the render`);
      assert.equal(r.content[1].uri, sc.uri);
    }
    const failed = (await mcp.ok("shoal_exec", { src: "exit 3" })).value as Rec;
    assert.equal(failed.ok, false);

    const big = await mcp.call("shoal_exec", { src: "seq 1 5000" });
    const sc = bounded(big, "seq 1 5000");
    assert.equal(((sc.value as Rec).out as Rec).$, "ref");
    assert.equal(sc.render, textOf(big), "an elided value keeps its render beside it");
    assert.ok((sc.render as string).startsWith("1\n2\n3\n"));
  },
);

mcpTest(
  "M-OUT-1 for task-backed results: a run over one slice arrives through task.await without a render when complete, with it when elided",
  async (mcp) => {
    const small = await mcp.call("shoal_exec", { src: "sleep 1.2; echo done" });
    const sc = bounded(small, "task-backed echo");
    assert.ok((sc.elapsed_ms as number) >= 1000, "it ran past the first slice");
    assert.equal("render" in sc, false);
    assert.deepEqual((sc.value as Rec).out, { $: "str", v: "done\n" });
    assert.equal(textOf(small), "done");

    const large = await mcp.call("shoal_exec", { src: "sleep 1.2; seq 1 5000" });
    const elided = bounded(large, "task-backed seq");
    assert.ok((elided.elapsed_ms as number) >= 1000);
    assert.equal(((elided.value as Rec).out as Rec).$, "ref");
    assert.equal(elided.render, textOf(large));
  },
);

mcpTest(
  "M-OUT-7: a huge single line, a huge table and a huge stderr, each with the 64 KiB elision budget, stay within 65536 bytes with ref and uri; the text item is the kernel's bounded render",
  async (mcp) => {
    const elide = { max_bytes: 65536, max_rows: 1000000, max_items: 1000000 };
    const table = `awk 'BEGIN { printf "["; for (i = 0; i < 100000; i++) ` +
      `printf "%s{\\"name\\":\\"f%d\\",\\"size\\":%d}", (i ? "," : ""), i, i; print "]" }'`;
    const cases: [string, string][] = [
      ["line", "head -c 3000000 /dev/zero | tr '\\0' a"],
      ["table", table],
      ["stderr", "head -c 3000000 /dev/zero | tr '\\0' e >&2; exit 3"],
    ];
    for (const [what, src] of cases) {
      const r = await mcp.call("shoal_exec", { src, elide });
      assert.equal(r.isError, false, what);
      const sc = bounded(r, what);
      const ref = r.content[1].name as string;
      const uri = r.content[1].uri as string;
      assert.match(ref, /^out:[0-9]+$/);
      assert.equal(sc.ref, ref, `${what}: ref`);
      assert.equal(sc.uri, uri, `${what}: uri`);
      const text = textOf(r);
      assert.ok(byteLength(text) <= SC_LIMIT);
      assert.ok(
        text.endsWith(`fetch via ${uri})`),
        `${what}: the text is the kernel's render, cut with its marker`,
      );
      if (sc.truncated === true) assertTruncated(sc, uri, what);
      else {
        const render = sc.render as string;
        assert.ok(render.endsWith(`fetch via ${uri})`), `${what}: the render is cut again`);
        const head = render.slice(0, render.lastIndexOf("…("));
        assert.ok(text.startsWith(head), `${what}: the cut render is a prefix of the text`);
        assert.ok(head.length > 0, `${what}: some render remains`);
      }
    }
  },
);

mcpTest(
  "M-OUT-7: shoal_pty_open with 300 KB of arguments, shoal_pty_list, and shoal_pty_read of a full 1000×1000 screen are truncated to 65536 bytes with the PTY's uri",
  async (mcp) => {
    const filler = ["a", "b", "c"].map((c) => c.repeat(100000));
    const opened = await mcp.call("shoal_pty_open", {
      cmd: "bash",
      args: ["-c", "head -c 999999 /dev/zero | tr '\\0' x; sleep 60", ...filler],
      cols: 1000,
      rows: 1000,
    });
    assert.equal(opened.isError, false);
    const uri = opened.content[1].uri as string;
    assert.match(uri, /^shoal:\/\/pty\/[0-9]+$/);
    const ptyId = opened.content[1].name as string;
    assertTruncated(bounded(opened, "pty_open"), uri, "pty_open");
    assert.ok((bounded(opened, "pty_open").preview as string).includes(`"pty_id": "${ptyId}"`));

    const listed = bounded(await mcp.call("shoal_pty_list"), "pty_list");
    assertTruncated(listed, null, "pty_list");

    // The resource read is not bounded by M-OUT-7: it shows when the screen is full.
    await pollUntil(
      () => mcp.read(uri),
      (r) => ((r.structuredContent as Rec).screen as string[])[998] === "x".repeat(1000),
    );
    const read = await mcp.call("shoal_pty_read", { pty_id: ptyId });
    const sc = bounded(read, "pty_read");
    assertTruncated(sc, uri, "pty_read");
    assert.ok((sc.bytes as number) > 1000000, `the full read was ${sc.bytes} bytes`);
    await mcp.ok("shoal_pty_close", { pty_id: ptyId });
  },
);

mcpTest(
  "M-OUT-7: shoal_journal {limit:5} after five 30 KB sources and shoal_plan of touch on 200 long paths stay within 65536 bytes; the plan keeps plan_ref and uri",
  async (mcp) => {
    for (let i = 0; i < 5; i++) await mcp.ok("shoal_exec", { src: `# ${"j".repeat(30000)}` });
    const journal = bounded(await mcp.call("shoal_journal", { limit: 5 }), "journal");
    assertTruncated(journal, null, "journal");

    const paths = longPaths("/tmp/never-created", 200);
    const planned = await mcp.call("shoal_plan", { src: `touch ${paths.join(" ")}` });
    assert.equal(planned.isError, false);
    const sc = bounded(planned, "plan");
    const uri = planned.content[1].uri as string;
    assertTruncated(sc, uri, "plan");
    assert.match(String(sc.plan_ref), /^plan:[0-9a-f]{32}$/);
    assert.equal(uri, `shoal://plan/${String(sc.plan_ref).slice(5)}`);
  },
);

mcpTest(
  "M-OUT-7: -32011 and -32010 error results over 200 long paths are truncated to 65536 bytes, keeping code, plan_ref and uri",
  async (_human, box) => {
    const agent = await connectMcp(box, {
      SHOAL_TOKEN: (await createToken(box, "agent:big", "big")).secret,
    });
    try {
      const touch = (dir: string) => `touch ${longPaths(dir, 200).join(" ")}`;
      const ask = await agent.call("shoal_exec", { src: touch(`${box.dir}/work`) });
      assert.equal(ask.isError, true);
      const asked = bounded(ask, "-32011");
      assert.equal(asked.code, -32011);
      assert.match(String(asked.plan_ref), /^plan:[0-9a-f]{32}$/);
      assertTruncated(asked, `shoal://plan/${String(asked.plan_ref).slice(5)}`, "-32011");

      const deny = await agent.call("shoal_exec", { src: touch("/denied") });
      assert.equal(deny.isError, true);
      const denied = bounded(deny, "-32010");
      assert.equal(denied.code, -32010);
      assert.equal(denied.truncated, true);
      assert.ok((denied.preview as string).includes('"verdict": "deny"'));
    } finally {
      await agent.close();
    }
  },
  async (box) => {
    await writePolicy(`${box.dir}/config/shoal/leash.jsonc`, {
      "agent:big": {
        fs: { read: ["/**"], write: [`${box.dir}/work/**`] },
        proc_spawn: ["*"],
        session_write: true,
        auto_apply: "never",
      },
    });
    return { XDG_CONFIG_HOME: `${box.dir}/config` };
  },
);

mcpTest(
  "M-OUT-7: output whose last line looks like a marker of another ref is text: the render cut again counts exactly the lines left out, not the number that line names",
  async (mcp, box) => {
    const lines = Array.from(
      { length: 1064 },
      (_, i) => `line ${String(i).padStart(4, "0")} ${"x".repeat(50)}`,
    );
    lines.push("…(999999 more lines, fetch via shoal://out/17)");
    await Deno.writeTextFile(`${box.dir}/saved.txt`, lines.join("\n"));
    const sc = bounded(await mcp.call("shoal_exec", { src: `cat ${box.dir}/saved.txt` }), "saved");
    // 64,951 bytes: the kernel's render is whole; beside the value it passes the bound.
    const render = sc.render as string;
    assert.ok(byteLength(render) < byteLength(lines.join("\n")), "cut by the facade");
    const kept = render.split("\n").length - 1;
    assert.ok(kept > 0 && kept < lines.length, `${kept} lines kept`);
    const marker = `\n…(${lines.length - kept} more lines, fetch via ${sc.uri})`;
    assert.ok(render.endsWith(marker), render.slice(-80));
  },
);
