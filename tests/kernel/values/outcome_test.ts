import assert from "node:assert/strict";
import { BlobValue } from "../../../src/kernel/values/blob_value.ts";
import { stderrValue, stdoutValue } from "../../../src/kernel/values/outcome.ts";
import { IntegralFloat, Table, tagOf } from "../../../src/kernel/values/value.ts";
import { capture, outcomeOf, withCas } from "./_fixtures.ts";

Deno.test("stdout conversion follows K-BASH-10's examples", async () => {
  await withCas(async (cas) => {
    assert.equal(stdoutValue(cas, await capture(cas, "42\n")), 42);
    assert.equal(stdoutValue(cas, await capture(cas, "hello\n")), "hello\n");
    assert.equal(stdoutValue(cas, await capture(cas, "")), "");
    assert.equal(stdoutValue(cas, await capture(cas, " \n\t")), " \n\t");
    assert.equal(stdoutValue(cas, await capture(cas, '"hello"\n')), "hello");
    assert.deepEqual(
      stdoutValue(cas, await capture(cas, new Uint8Array([0xff]))),
      new Uint8Array([0xff]),
    );
    assert.ok(stdoutValue(cas, await capture(cas, "1.0")) instanceof IntegralFloat);
    const people = stdoutValue(cas, await capture(cas, '[{"name":"a"},{"name":"b","age":3}]'));
    assert.ok(people instanceof Table);
    assert.deepEqual(people.cols, ["name", "age"]);
    assert.equal(people.column("age")![0], null);
    assert.equal(
      stdoutValue(cas, await capture(cas, "[1,2] x")),
      "[1,2] x",
      "not exactly one JSON text",
    );
    assert.equal(stdoutValue(cas, await capture(cas, "1\n2\n")), "1\n2\n");
  });
});

Deno.test("stderr is str or bytes, never JSON", async () => {
  await withCas(async (cas) => {
    assert.equal(stderrValue(cas, await capture(cas, "42\n")), "42\n");
    assert.equal(tagOf(stderrValue(cas, await capture(cas, new Uint8Array([0x80])))), "bytes");
  });
});

Deno.test("stdout above 64 KiB stays in the CAS; JSON above 16 MiB is a str (K-BASH-10/11)", async () => {
  await withCas(async (cas) => {
    const text = "é".repeat(40000) + "\n";
    const big = stdoutValue(cas, await capture(cas, text));
    assert.ok(big instanceof BlobValue);
    assert.equal(big.kind, "str");
    assert.equal(big.scalars, 40001);
    // What python3's json.dumps(list(range(2000000))) prints: 16,888,890 bytes.
    const json = "[" + Array.from({ length: 2_000_000 }, (_, i) => i).join(", ") + "]";
    assert.ok(json.length > 16 * 1024 * 1024);
    const huge = stdoutValue(cas, await capture(cas, json));
    assert.ok(huge instanceof BlobValue);
    assert.equal(huge.kind, "str");
    const binary = stdoutValue(cas, await capture(cas, new Uint8Array(70000).fill(0xfe)));
    assert.ok(binary instanceof BlobValue);
    assert.equal(binary.kind, "bytes");
  });
});

Deno.test("an outcome keeps status, raw streams, a cut cmd and the truncation flag (K-BASH-9)", async () => {
  await withCas(async (cas) => {
    const o = await outcomeOf(cas, '{"a":1}\n', "warn\n", 3);
    assert.equal(o.ok, false);
    assert.equal(o.status, 3);
    assert.ok(o.out instanceof Map);
    assert.equal(o.stdout, '{"a":1}\n');
    assert.equal(o.err, "warn\n");
    assert.equal(o.truncated, false);
    const { outcomeValue } = await import("../../../src/kernel/values/outcome.ts");
    const long = outcomeValue(cas, {
      status: null,
      signal: "SIGTERM",
      out: await capture(cas, ""),
      err: await capture(cas, ""),
      dur_ns: 1,
      pid: 2,
      cmd: "é".repeat(300),
    });
    assert.equal(long.cmd, "é".repeat(256) + "…");
    assert.equal(long.ok, false);
    const short = outcomeValue(cas, {
      status: 0,
      signal: null,
      out: await capture(cas, ""),
      err: {
        ...(await capture(cas, "")),
        blob: { ...(await capture(cas, "")).blob, truncated: true },
      },
      dur_ns: 1,
      pid: 2,
      cmd: "x".repeat(256),
    });
    assert.equal(short.cmd, "x".repeat(256));
    assert.equal(short.truncated, true);
  });
});
