import assert from "node:assert/strict";
import { toolError, toolSuccess } from "../../src/mcp/result.ts";

const bytes = (x: unknown) =>
  new TextEncoder().encode(typeof x === "string" ? x : JSON.stringify(x)).length;

Deno.test("M-OUT-2/3/7: an error echoing a 70 KB id links nothing, and its text and structuredContent fit 65536 bytes with the code in the preview", () => {
  const id = `pty:${"9".repeat(70000)}`;
  const r = toolError({ code: -32022, message: `unknown pty: ${id}`, data: { pty_id: id } }, true);
  assert.equal(r.content.length, 1, "no link to a URI that long");
  const text = (r.content[0] as { text: string }).text;
  assert.ok(bytes(text) <= 65536, `text ${bytes(text)} bytes`);
  assert.match(text, /…\([0-9]+ more lines, fetch via ref\)$/);
  assert.ok(bytes(r.structuredContent) <= 65536);
  assert.equal(r.structuredContent.code, -32022);
  assert.ok(String(r.structuredContent.preview).startsWith('{\n  "code": -32022,\n'));
});

Deno.test("M-OUT-3: a link keeps a URI of up to 1024 characters; a longer one is no link, and a long short ref leaves the URI as the name", () => {
  const render = Array.from({ length: 20000 }, (_, i) => `line ${i}`).join("\n");
  const near = `shoal://out/9?path=${"k".repeat(1024 - 19)}`;
  const kept = toolSuccess({ ref: "out:9", uri: near, render }, true);
  assert.deepEqual(kept.content[1], {
    type: "resource_link",
    uri: near,
    name: "out:9",
    mimeType: "application/json",
  });
  assert.ok((kept.content[0] as { text: string }).text.endsWith(`fetch via ${near})`));
  const far = toolSuccess({ ref: "out:9", uri: `${near}k`, render }, true);
  assert.equal(far.content.length, 1);
  assert.ok(bytes((far.content[0] as { text: string }).text) <= 65536);
  const longRef = toolSuccess({ ref: `out:${"9".repeat(2000)}`, uri: "shoal://out/9" }, true);
  assert.equal((longRef.content[1] as { name: string }).name, "shoal://out/9");
});
