// E-4: sources past the inline limit are parsed and analysed in a worker, with the same results.
import assert from "node:assert/strict";
import { parseBash } from "../../../src/kernel/bash/ast.ts";
import { INLINE_PARSE_LIMIT } from "../../../src/protocol/limits.ts";
import { compactJson, JsonText } from "../../../src/protocol/rpc.ts";
import { kernelTest } from "../../_support/kernel.ts";
import type { Rec } from "../../_support/rec.ts";
import { rpcError } from "../../_support/rejection.ts";

Deno.test("JsonText is written verbatim where it stands, next to exact bigints", () => {
  const text = compactJson({ a: new JsonText('{"x":[1,"\\"@jsontext-"]}'), b: 2n ** 64n, c: "s" });
  assert.equal(text, '{"a":{"x":[1,"\\"@jsontext-"]},"b":18446744073709551616,"c":"s"}');
});

kernelTest(
  "E-4 a source past the inline limit parses, explains and runs with the same results as inline",
  async (k) => {
    const conn = await k.attach();
    const big = "echo a > out.txt; cat out.txt # " + "é".repeat(INLINE_PARSE_LIMIT) + "\n";
    assert.ok(big.length > INLINE_PARSE_LIMIT);
    const parsed = await conn.request("parse", { src: big }) as Rec;
    assert.deepEqual(parsed.ast, JSON.parse(JSON.stringify(parseBash(big))));
    const explained = await conn.request("explain", { src: big }) as Rec;
    const small = await conn.request("explain", { src: "echo a > out.txt; cat out.txt" }) as Rec;
    assert.deepEqual(explained.effects, small.effects);
    assert.equal(explained.verdict, small.verdict);
    assert.deepEqual(explained.ast, parsed.ast);
    const ran = await conn.request("exec", { src: big }) as Rec;
    assert.deepEqual((ran.value as Rec).out, { $: "str", v: "a\n" });
    const bad = big + "if then (";
    const e = await rpcError(conn.request("parse", { src: bad }));
    assert.equal(e.code, -32001);
    let inline: unknown;
    try {
      parseBash(bad);
    } catch (err) {
      inline = err;
    }
    assert.deepEqual(e.data, (inline as { data: unknown }).data);
    assert.equal(e.message, (inline as Error).message);
  },
);
