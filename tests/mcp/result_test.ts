import assert from "node:assert/strict";
import { deriveLink, toolError, toolSuccess } from "../../src/mcp/result.ts";

const bytes = (s: string) => new TextEncoder().encode(s).length;

Deno.test("M-OUT-1/2: an array result becomes {items}; its bounded pretty JSON marker says ref", () => {
  const rows = Array.from({ length: 5000 }, (_, i) => ({ id: i, src: `echo ${i}` }));
  const r = toolSuccess(rows, true);
  assert.deepEqual(r.structuredContent, { items: rows });
  assert.equal(r.isError, false);
  assert.equal(r.content.length, 1, "no link can be derived");
  const text = (r.content[0] as { text: string }).text;
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
