import assert from "node:assert/strict";
import { deriveLink, toolError, toolSuccess } from "../../src/mcp/result.ts";
import { boundText } from "../../src/protocol/bound_text.ts";

const bytes = (s: string) => new TextEncoder().encode(s).length;

Deno.test("M-OUT-1/2/7: an array result becomes {items}; its bounded pretty JSON marker says ref", () => {
  const rows = Array.from({ length: 50 }, (_, i) => ({ id: i, src: `echo ${i}` }));
  const small = toolSuccess(rows, true);
  assert.deepEqual(small.structuredContent, { items: rows });
  assert.equal(small.isError, false);
  assert.equal(small.content.length, 1, "no link can be derived");
  const many = Array.from({ length: 5000 }, (_, i) => ({ id: i, src: `echo ${i}` }));
  const text = (toolSuccess(many, true).content[0] as { text: string }).text;
  assert.ok(bytes(text) <= 65536);
  assert.match(text, /…\([0-9]+ more lines, fetch via ref\)$/);
});

Deno.test("M-OUT-2/3: a render is bounded with the link URI in the marker; the link carries the short ref", () => {
  const render = Array.from({ length: 20000 }, (_, i) => `line ${i}`).join("\n");
  const r = toolSuccess({ ref: "out:17", uri: "shoal://out/17", value: {}, render }, true);
  const text = (r.content[0] as { text: string }).text;
  assert.ok(bytes(text) <= 65536);
  assert.match(text, /fetch via shoal:\/\/out\/17\)$/);
  assert.deepEqual(r.content[1], {
    type: "resource_link",
    uri: "shoal://out/17",
    name: "out:17",
    mimeType: "application/json",
  });
});

Deno.test("M-OUT-3: link derivation order is uri, elided value uri, then ref, task, plan_ref, pty_id", () => {
  assert.deepEqual(deriveLink({ ref: "out:3", value: { $: "ref", uri: "shoal://out/3?path=x" } }), {
    uri: "shoal://out/3?path=x",
    name: "out:3",
  });
  assert.deepEqual(deriveLink({ task: "task:7", events: "task.7" }), {
    uri: "shoal://task/7",
    name: "task:7",
  });
  assert.deepEqual(deriveLink({ plan_ref: "plan:ab" }), {
    uri: "shoal://plan/ab",
    name: "plan:ab",
  });
  assert.deepEqual(deriveLink({ pty_id: "pty:2", cols: 80 }), {
    uri: "shoal://pty/2",
    name: "pty:2",
  });
  assert.deepEqual(deriveLink({ uri: "shoal://journal" }), {
    uri: "shoal://journal",
    name: "shoal://journal",
  });
  assert.equal(deriveLink({ ptys: [] }), null);
});

Deno.test("M-OUT-4: a kernel error is an isError result with the error as structuredContent and a link from data", () => {
  const e = {
    code: -32002,
    message: "command failed with exit status 1",
    data: {
      code: "cmd_failed",
      status: 1,
      signal: null,
      stderr: "",
      ref: "out:6",
      uri: "shoal://out/6",
    },
  };
  const r = toolError(e, true);
  assert.equal(r.isError, true);
  assert.deepEqual(r.structuredContent, e);
  assert.deepEqual(JSON.parse((r.content[0] as { text: string }).text), e);
  assert.equal((r.content[1] as { uri: string }).uri, "shoal://out/6");
});

Deno.test("M-PROTO-1: without links (older protocol versions) only the text item remains", () => {
  const r = toolSuccess({ ref: "out:1", uri: "shoal://out/1", render: "1" }, false);
  assert.deepEqual(r.content, [{ type: "text", text: "1" }]);
});

Deno.test("M-OUT-3: R.uri wins over an elided value's uri; a non-ref value or a non-string member is skipped", () => {
  assert.deepEqual(
    deriveLink({
      uri: "shoal://out/4",
      ref: "out:4",
      value: { $: "ref", uri: "shoal://out/4?path=out" },
    }),
    { uri: "shoal://out/4", name: "out:4" },
  );
  assert.deepEqual(deriveLink({ value: { $: "str", v: "x", uri: "shoal://no" }, ref: "out:5" }), {
    uri: "shoal://out/5",
    name: "out:5",
  });
  assert.deepEqual(deriveLink({ ref: 5, task: "task:7", plan_ref: "plan:ab" }), {
    uri: "shoal://task/7",
    name: "task:7",
  });
  assert.deepEqual(deriveLink({ plan_ref: "plan:ab", pty_id: "pty:1" }), {
    uri: "shoal://plan/ab",
    name: "plan:ab",
  });
  assert.deepEqual(deriveLink({ ref: `val:sha256:${"a".repeat(64)}` }), {
    uri: `shoal://val/sha256:${"a".repeat(64)}`,
    name: `val:sha256:${"a".repeat(64)}`,
  });
  assert.equal(deriveLink(null), null);
  assert.equal(deriveLink([{ ref: "out:1" }]), null);
});

const str = (v: string) => ({ $: "str", v });
const EMPTY = str("");

function outcome(out: unknown, err: unknown = EMPTY, ok = true) {
  return {
    $: "outcome",
    ok,
    status: ok ? 0 : 1,
    signal: null,
    out,
    err,
    dur_ns: 1000,
    pid: 42,
    cmd: "cmd",
  };
}

function elided(of: string, n: number, path = "out") {
  return {
    $: "ref",
    uri: `shoal://out/9?path=${path}`,
    of,
    n,
    preview: { $: "null" },
    render_head: "",
  };
}

function execResult(value: unknown, render: string) {
  return { ref: "out:9", uri: "shoal://out/9", elapsed_ms: 3, value, render };
}

function textOf(r: { content: unknown[] }): string {
  return (r.content[0] as { text: string }).text;
}

const { render: _r, ...withoutRender } = execResult(null, "");

Deno.test("M-OUT-1: a complete value (str, table, record, failed outcome) travels once: render left out of structuredContent, kept as the text", () => {
  const table = {
    $: "table",
    cols: { name: [str("a"), str("b")], size: [{ $: "int", v: 1 }, { $: "int", v: 2 }] },
    n: 2,
  };
  const record = { $: "record", v: { a: { $: "int", v: 1 } } };
  const cases: [unknown, string][] = [
    [outcome(str("hello\n")), "hello"],
    [outcome(table), "name  size\n────  ────\na     1\nb     2"],
    [outcome(record), "a: 1"],
    [outcome(str(""), str("boom\n"), false), "--- stderr ---\nboom\n[exit status 1]"],
  ];
  for (const [value, render] of cases) {
    const r = toolSuccess(execResult(value, render), true);
    assert.deepEqual(r.structuredContent, { ...withoutRender, value });
    assert.equal(textOf(r), render, "content keeps the render");
    assert.equal(r.content[1].type, "resource_link");
  }
});

Deno.test("M-OUT-1: an elided value (out, err, or the whole value) keeps its bounded render beside it", () => {
  const cases = [
    outcome(elided("str", 100000)),
    outcome(str("x"), elided("str", 100000, "err"), false),
    elided("list", 3000, ""),
  ];
  for (const value of cases) {
    const kernel = execResult(value, "1\n2\n3");
    const r = toolSuccess(kernel, true);
    assert.deepEqual(r.structuredContent, kernel);
    assert.equal(textOf(r), "1\n2\n3");
  }
  // Without a value there is nothing to stand in for the render.
  const renderOnly = { ref: "out:9", render: "text" };
  assert.deepEqual(toolSuccess(renderOnly, true).structuredContent, renderOnly);
});

Deno.test("M-OUT-7: a huge single line: the render is cut again so structuredContent fits 65536 bytes, with ref, uri and a marker counting the kernel's cut lines", () => {
  const line = "a".repeat(70000);
  const kernelRender = boundText(`${line}a\nb\nc`, "shoal://out/9");
  assert.ok(kernelRender.endsWith("…(3 more lines, fetch via shoal://out/9)"));
  const value = outcome({
    $: "ref",
    uri: "shoal://out/9?path=out",
    of: "str",
    n: line.length + 5,
    preview: str("a".repeat(256)),
    render_head: "a".repeat(80),
  });
  const r = toolSuccess(execResult(value, kernelRender), true);
  const sc = r.structuredContent;
  assert.ok(bytes(JSON.stringify(sc)) <= 65536, `${bytes(JSON.stringify(sc))} bytes`);
  assert.equal(sc.ref, "out:9");
  assert.equal(sc.uri, "shoal://out/9");
  assert.deepEqual(sc.value, value);
  const render = sc.render as string;
  assert.ok(/^a+…\(3 more lines, fetch via shoal:\/\/out\/9\)$/.test(render), render.slice(-80));
  assert.equal(textOf(r), kernelRender, "content is unchanged");
});

Deno.test("M-OUT-7: a huge table whose value alone nearly fills the budget: render cut to whole lines, or the truncated form with ref and uri", () => {
  const rows = Array.from({ length: 3000 }, (_, i) => `f${i}  ${i}`);
  const kernelRender = boundText(`name  size\n────  ────\n${rows.join("\n")}`, "shoal://out/9");
  const previewOf = (bytesWanted: number) => ({
    $: "ref",
    uri: "shoal://out/9?path=out",
    of: "table",
    n: 3000,
    cols: { name: "str", size: "int" },
    preview: str("p".repeat(bytesWanted)),
    render_head: "",
  });
  const cut = toolSuccess(execResult(outcome(previewOf(30000)), kernelRender), true);
  const render = cut.structuredContent.render as string;
  assert.ok(bytes(JSON.stringify(cut.structuredContent)) <= 65536);
  assert.ok(render.startsWith("name  size\n────  ────\nf0  0\n"));
  const kept = render.split("\n").length - 1;
  assert.ok(
    render.endsWith(`\n…(${3002 - kept} more lines, fetch via shoal://out/9)`),
    render.slice(-80),
  );

  const full = execResult(outcome(previewOf(65500)), kernelRender);
  const truncated = toolSuccess(full, true);
  const sc = truncated.structuredContent;
  assert.ok(bytes(JSON.stringify(sc)) <= 65536);
  assert.equal(sc.truncated, true);
  assert.equal(sc.bytes, bytes(JSON.stringify(full)));
  assert.equal(sc.ref, "out:9");
  assert.equal(sc.uri, "shoal://out/9");
  assert.ok((sc.preview as string).startsWith('{\n  "ref": "out:9",\n  "uri": "shoal://out/9",\n'));
  const preview = sc.preview as string;
  assert.ok(
    /…\([0-9]+ more lines, fetch via shoal:\/\/out\/9\)$/.test(preview),
    preview.slice(-80),
  );
  assert.equal(textOf(truncated), kernelRender, "content is unchanged");
});

Deno.test("M-OUT-7: a huge stderr in an error result: the truncated form keeps code, the data's ref and uri; text unchanged", () => {
  const e = {
    code: -32002,
    message: "command failed with exit status 1",
    data: {
      code: "cmd_failed",
      status: 1,
      signal: null,
      stderr: 'e"\n'.repeat(100000),
      ref: "out:6",
      uri: "shoal://out/6",
    },
  };
  const r = toolError(e, true);
  const sc = r.structuredContent;
  assert.ok(bytes(JSON.stringify(sc)) <= 65536);
  assert.equal(sc.truncated, true);
  assert.equal(sc.code, -32002);
  assert.equal(sc.ref, "out:6");
  assert.equal(sc.uri, "shoal://out/6");
  assert.ok((sc.preview as string).startsWith('{\n  "code": -32002,\n  "message"'));
  assert.equal(textOf(r), boundText(JSON.stringify(e, null, 2), "shoal://out/6"));
  assert.equal(r.isError, true);
});

Deno.test("M-OUT-7: an error with a plan_ref and a huge data keeps plan_ref and the plan uri", () => {
  const paths = Array.from({ length: 20000 }, (_, i) => `/tmp/work/file-${i}`);
  const e = {
    code: -32011,
    message: "approval required",
    data: {
      verdict: "approval_required",
      effects: [{ kind: "fs_write", paths }],
      plan_ref: `plan:${"ab".repeat(16)}`,
    },
  };
  const sc = toolError(e, true).structuredContent;
  assert.ok(bytes(JSON.stringify(sc)) <= 65536);
  assert.deepEqual(
    { code: sc.code, plan_ref: sc.plan_ref, uri: sc.uri, truncated: sc.truncated },
    {
      code: -32011,
      plan_ref: e.data.plan_ref,
      uri: `shoal://plan/${"ab".repeat(16)}`,
      truncated: true,
    },
  );
});

/** A random text of `n` characters mixing what JSON escapes (quotes, controls) with wide characters. */
function randomText(n: number, rand: () => number): string {
  const alphabet = ["a", "\n", '"', "\\", "\u0001", "é", "€", "😀", " ", "\t"];
  let s = "";
  for (let i = 0; i < n; i++) s += alphabet[Math.floor(rand() * alphabet.length)];
  return s;
}

Deno.test("M-OUT-7: on random renders and values, structuredContent never exceeds 65536 bytes, fits unchanged when it can, and the render stays a prefix", () => {
  let seed = 7;
  const rand = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
  for (let round = 0; round < 60; round++) {
    const render = boundText(randomText(Math.floor(rand() * 40000), rand), "shoal://out/9");
    const value = outcome(
      elided("str", 1, "out"),
      str(randomText(Math.floor(rand() * 30000), rand)),
    );
    const kernel = execResult(value, render);
    const sc = toolSuccess(kernel, true).structuredContent;
    const size = bytes(JSON.stringify(sc));
    assert.ok(size <= 65536, `round ${round}: ${size} bytes`);
    if (bytes(JSON.stringify(kernel)) <= 65536) assert.deepEqual(sc, kernel);
    else if (sc.truncated === true) {
      assert.ok(bytes(JSON.stringify({ ...kernel, render: "" })) > 65536 - 100);
    } else {
      const cut = sc.render as string;
      const head = cut.replace(/…\([0-9]+ more lines, fetch via shoal:\/\/out\/9\)$/, "");
      assert.notEqual(head, cut, "a cut render ends in the marker");
      assert.ok(render.startsWith(head));
    }
  }
});
