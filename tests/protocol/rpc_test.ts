import assert from "node:assert/strict";
import { NESTING_LIMIT } from "../../src/protocol/limits.ts";
import { compactJson, decodeFrame, encodeFrame } from "../../src/protocol/rpc.ts";

const enc = new TextEncoder();
const frame = (s: string) => enc.encode(s);

Deno.test("kernel ids are echoed verbatim, even integers beyond 2^53 (W-RPC-2)", () => {
  const msg = decodeFrame(
    frame('{"jsonrpc":"2.0","id":1152921504606846977,"method":"m"}'),
    "verbatim",
  );
  assert.equal(msg.kind, "request");
  assert.equal(
    new TextDecoder().decode(encodeFrame({ id: msg.kind === "request" ? msg.id : null })),
    '{"id":1152921504606846977}\n',
  );
});

Deno.test("invalid UTF-8 and malformed JSON are -32700 with id null (W-FRAME-6)", () => {
  for (const bytes of [new Uint8Array([0x7b, 0xff, 0x7d]), frame("{nope")]) {
    const msg = decodeFrame(bytes, "verbatim");
    assert.equal(msg.kind, "invalid");
    if (msg.kind === "invalid") {
      assert.equal(msg.error.code, -32700);
      assert.equal(msg.id, null);
      assert.equal(typeof (msg.error.data as { detail: string }).detail, "string");
    }
  }
});

Deno.test("a U+FFFD written in a frame is text; bad bytes beside one are still -32700 (W-FRAME-6)", () => {
  const ok = decodeFrame(frame('{"jsonrpc":"2.0","method":"m","params":{"s":"a\uFFFDb"}}'), "mcp");
  assert.deepEqual(ok, { kind: "notification", method: "m", params: { s: "a\uFFFDb" } });
  const text = frame('{"jsonrpc":"2.0","method":"m","params":{"s":"\uFFFD?"}}');
  text[text.indexOf(0x3f)] = 0xff; // the "?" becomes a byte that is not UTF-8
  const bad = decodeFrame(text, "mcp");
  assert.equal(bad.kind, "invalid");
  if (bad.kind === "invalid") assert.equal(bad.error.code, -32700);
});

Deno.test("non-objects and batches are -32600 with id null (W-FRAME-7)", () => {
  for (const s of ["[1,2]", '[{"jsonrpc":"2.0","id":1,"method":"m"}]', "42", '"x"']) {
    const msg = decodeFrame(frame(s), "verbatim");
    assert.equal(msg.kind, "invalid");
    if (msg.kind === "invalid") assert.equal(msg.error.code, -32600);
  }
});

Deno.test("envelope rules: bad jsonrpc echoes the id, bad params is -32602, null params is {} (W-RPC-1)", () => {
  const bad = decodeFrame(frame('{"jsonrpc":"1.0","id":"a","method":"m"}'), "mcp");
  assert.equal(bad.kind, "invalid");
  if (bad.kind === "invalid") {
    assert.equal(bad.error.code, -32600);
    assert.equal(bad.id, "a");
  }
  const noMethod = decodeFrame(frame('{"jsonrpc":"2.0","id":2,"method":7}'), "mcp");
  assert.equal(noMethod.kind === "invalid" && noMethod.error.code, -32600);
  const params = decodeFrame(frame('{"jsonrpc":"2.0","id":3,"method":"m","params":[1]}'), "mcp");
  assert.equal(params.kind === "invalid" && params.error.code, -32602);
  const nul = decodeFrame(frame('{"jsonrpc":"2.0","id":4,"method":"m","params":null}'), "mcp");
  assert.deepEqual(nul, { kind: "request", id: 4, method: "m", params: {} });
});

Deno.test("MCP ids must be strings or safe integers (W-RPC-2)", () => {
  for (const id of ["1.5", "1.0", "1e3", "-0", "true", "{}", "[]", "9007199254740993"]) {
    const msg = decodeFrame(frame(`{"jsonrpc":"2.0","id":${id},"method":"m"}`), "mcp");
    assert.equal(msg.kind, "invalid", id);
    if (msg.kind === "invalid") {
      assert.equal(msg.error.code, -32600);
      assert.equal(msg.id, null);
    }
  }
});

Deno.test("frames without id are notifications; bigints serialize exactly (W-NUM-1)", () => {
  assert.equal(
    decodeFrame(frame('{"jsonrpc":"2.0","method":"n"}'), "verbatim").kind,
    "notification",
  );
  assert.equal(compactJson({ ts: 1767225600123456789n }), '{"ts":1767225600123456789}');
});

Deno.test("an error response with id null is a response, not an invalid frame (W-FRAME-4 replies)", () => {
  const msg = decodeFrame(
    frame('{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"frame exceeds 16 MiB"}}'),
    "mcp",
  );
  assert.equal(msg.kind, "response");
  const request = decodeFrame(frame('{"jsonrpc":"2.0","id":null,"method":"m"}'), "mcp");
  assert.equal(request.kind, "invalid");
});

Deno.test("a valid frame is decoded up to the nesting limit of its params; ids keep their exact text (M-IN-1, W-RPC-2)", () => {
  // the frame's object, params and x's arrays: exactly NESTING_LIMIT levels
  const deep = "[".repeat(NESTING_LIMIT - 2) + "]".repeat(NESTING_LIMIT - 2);
  for (const rule of ["mcp", "verbatim"] as const) {
    const msg = decodeFrame(
      frame(`{"jsonrpc":"2.0","id":9,"method":"m","params":{"x":${deep}}}`),
      rule,
    );
    assert.equal(msg.kind, "request", rule);
    if (msg.kind === "request") assert.equal(JSON.stringify(msg.id), "9");
  }
  const big = decodeFrame(
    frame(`{"params":{"x":${deep}},"id":1152921504606846977,"jsonrpc":"2.0","method":"m"}`),
    "verbatim",
  );
  assert.equal(big.kind === "request" && JSON.stringify(big.id), "1152921504606846977");
  const float = decodeFrame(
    frame(`{"jsonrpc":"2.0","id":1.0,"method":"m","params":{"x":${deep}}}`),
    "mcp",
  );
  assert.equal(float.kind === "invalid" && float.error.code, -32600);
});

Deno.test("a frame nested deeper than the limit is -32600 under its plain id or id null, unparsed, brackets in strings not counted (issue 13, M-IN-1)", () => {
  const deeper = "[".repeat(NESTING_LIMIT - 1) + "]".repeat(NESTING_LIMIT - 1);
  for (const rule of ["mcp", "verbatim"] as const) {
    const msg = decodeFrame(
      frame(`{"jsonrpc":"2.0","id":9,"method":"m","params":{"x":${deeper}}}`),
      rule,
    );
    assert.equal(msg.kind, "invalid", rule);
    if (msg.kind === "invalid") assert.deepEqual([msg.id, msg.error.code], [9, -32600]);
    // The id is found after the deep member too, and in a frame cut short before it ends.
    const after = decodeFrame(frame(`{"params":{"x":${deeper}},"id":"a\\"b","method":"m"`), rule);
    assert.equal(after.kind === "invalid" && JSON.stringify(after.id), '"a\\"b"', rule);
    // No plain id (an array, a float under MCP, none at all, a deep one): id null.
    for (
      const id of ["[1]", ...(rule === "mcp" ? ["1.0"] : []), `[${deeper}]`]
    ) {
      const noId = decodeFrame(frame(`{"id":${id},"params":{"x":${deeper}}}`), rule);
      assert.equal(noId.kind === "invalid" && noId.id, null, `${rule} ${id.slice(0, 8)}`);
    }
    // Unclosed, it is refused just the same; brackets inside a string (even after an escaped
    // quote) are text.
    assert.equal(
      decodeFrame(frame(`{"x":${deeper.slice(0, NESTING_LIMIT + 1)}`), rule).kind,
      "invalid",
    );
    // The depth is found in the bytes, before they are decoded: invalid UTF-8 makes no difference.
    const junk = new TextEncoder().encode(`{"x":[${deeper}`);
    const undecoded = decodeFrame(new Uint8Array([...junk, 0xff, 0x5d, 0x7d]), rule);
    assert.equal(undecoded.kind === "invalid" && undecoded.error.code, -32600, rule);
    const text = JSON.stringify('\\"' + "[".repeat(3 * NESTING_LIMIT));
    const inString = decodeFrame(
      frame(`{"jsonrpc":"2.0","id":1,"method":"m","params":{"s":${text}}}`),
      rule,
    );
    assert.equal(inString.kind, "request", rule);
  }
});

Deno.test("a kernel id deeper than 100 levels is -32600 with id null; one of 100 levels is echoed", () => {
  const id = (depth: number) => "[".repeat(depth) + "]".repeat(depth);
  for (const depth of [101, 1000, 3000]) {
    const msg = decodeFrame(frame(`{"jsonrpc":"2.0","id":${id(depth)},"method":"m"}`), "verbatim");
    assert.equal(msg.kind, "invalid", String(depth));
    if (msg.kind === "invalid") assert.deepEqual([msg.id, msg.error.code], [null, -32600]);
  }
  const ok = decodeFrame(frame(`{"jsonrpc":"2.0","id":${id(100)},"method":"m"}`), "verbatim");
  assert.equal(ok.kind === "request" && JSON.stringify(ok.id), id(100));
});

Deno.test("a kernel id nested too deeply to echo is -32600 with id null", () => {
  const deep = "[".repeat(100_000) + "]".repeat(100_000);
  const msg = decodeFrame(frame(`{"jsonrpc":"2.0","id":${deep},"method":"m"}`), "verbatim");
  assert.equal(msg.kind, "invalid");
  if (msg.kind === "invalid") assert.deepEqual([msg.id, msg.error.code], [null, -32600]);
});
