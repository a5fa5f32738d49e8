import assert from "node:assert/strict";
import { RpcError } from "../../src/protocol/errors.ts";
import {
  intParam,
  parseResourceUri,
  percentDecode,
  sliceParam,
} from "../../src/mcp/resource_uri.ts";

Deno.test("M-RES-3: segments are split on /, empty ones dropped, each percent-decoded", () => {
  const { segments, query } = parseResourceUri("shoal://events//user.a%2Fb/#frag?x=1");
  assert.deepEqual(segments, ["events", "user.a/b"]);
  assert.equal(query.size, 0, "everything from # on is ignored");
});

Deno.test("M-RES-3: query pairs decode keys and values, + is literal, no = means empty, last duplicate wins", () => {
  const { query } = parseResourceUri(
    "shoal://out/3?path=out.rows%5B0%5D&x+y=a+b&flag&path=.err&k%3D=v%3D",
  );
  assert.equal(query.get("path"), ".err");
  assert.equal(query.get("x+y"), "a+b");
  assert.equal(query.get("flag"), "");
  assert.equal(query.get("k="), "v=");
});

Deno.test("M-RES-3: invalid escapes stay literal, UTF-8 escapes decode", () => {
  assert.equal(percentDecode("%zz%4"), "%zz%4");
  assert.equal(percentDecode("caf%C3%A9"), "café");
  assert.equal(percentDecode("bad%C3"), "bad%C3");
});

Deno.test("M-RES-3: a non-shoal URI is -32602", () => {
  assert.throws(
    () => parseResourceUri("file:///etc/passwd"),
    (e) => e instanceof RpcError && e.code === -32602,
  );
});

Deno.test("M-RES-3: typed query values are checked and named", () => {
  const q =
    parseResourceUri("shoal://journal?since=-5&limit=0&big=1767225600123456789&slice=2..9&bad=1.5")
      .query;
  assert.equal(intParam(q, "since", null), -5);
  assert.equal(intParam(q, "big", null), 1767225600123456789n, "beyond 2^53 stays exact");
  assert.throws(
    () => intParam(q, "limit", 1),
    (e) => e instanceof RpcError && e.code === -32602 && e.message.includes("limit"),
  );
  assert.throws(
    () => intParam(q, "bad", null),
    (e) => e instanceof RpcError && e.message.includes("bad"),
  );
  assert.deepEqual(sliceParam(q), [2, 9]);
  const badSlice = parseResourceUri("shoal://out/1?slice=3").query;
  assert.throws(
    () => sliceParam(badSlice),
    (e) => e instanceof RpcError && e.message.includes("slice"),
  );
});

Deno.test("M-RES-3: each escape decodes on its own; only the bytes that are not valid UTF-8 stay literal", () => {
  assert.equal(percentDecode("%41%C3"), "A%C3");
  assert.equal(percentDecode("%C3%A9%FF%41"), "é%FFA");
  assert.equal(percentDecode("%E2%82"), "%E2%82", "a truncated sequence stays literal");
  assert.equal(percentDecode("%C0%AF"), "%C0%AF", "an overlong encoding stays literal");
  assert.equal(percentDecode("%ED%A0%80"), "%ED%A0%80", "a surrogate stays literal");
  assert.equal(percentDecode("%F0%9F%90%9A%2F"), "🐚/");
  const { segments } = parseResourceUri("shoal://events/user.%41%FF");
  assert.deepEqual(segments, ["events", "user.A%FF"]);
});

Deno.test("M-RES-3: a fragment after the query is dropped too, and %26 inside a value is not a separator", () => {
  const { query } = parseResourceUri("shoal://out/3?path=a%26b&x=1#y=2&path=z");
  assert.equal(query.get("path"), "a&b");
  assert.equal(query.get("x"), "1");
  assert.equal(query.has("y"), false);
});
