import assert from "node:assert/strict";
import { ErrorCode } from "../../../src/protocol/errors.ts";
import { startKernelWithPolicy, withKernel } from "../../_support/kernel.ts";
import { createToken, LOCAL_HUMAN } from "../../_support/principals.ts";
import type { Rec } from "../../_support/rec.ts";
import { tmpRunner, widestSource } from "../../_support/wide_effects.ts";
import { rpcError } from "../../_support/rejection.ts";

const NINE_MIB = 9 * 1024 * 1024;

withKernel(
  "J-2/K-JQ-4 two 9 MiB one-word sources leave journal.query and the journal channel small",
  async (conn) => {
    for (let i = 0; i < 2; i++) {
      const src = "#" + String(i).repeat(NINE_MIB);
      const result = await conn.request("exec", { src }) as Rec;
      assert.equal((result.value as Rec).ok, true);
    }
    const rows = await conn.request("journal.query", {}) as Rec[];
    assert.equal(rows.length, 2);
    for (const row of rows) {
      assert.ok(new TextEncoder().encode(row.src as string).length <= 16384 + 3);
      assert.ok((row.src as string).endsWith("…"));
    }
    assert.ok(JSON.stringify(rows).length < 64 * 1024);
    const events = await conn.request("events.read", { channel: "journal" }) as Rec;
    const payloads = (events.events as Rec[]).map((e) => e.payload as Rec);
    assert.equal(payloads.length, 2);
    assert.deepEqual(payloads.map((p) => p.head), ["#" + "0".repeat(255), "#" + "1".repeat(255)]);
    const full = await conn.request("journal.query", { head: "#" + "1".repeat(NINE_MIB) }) as Rec[];
    assert.deepEqual(full.map((r) => r.id), [rows[0].id]);
  },
);

withKernel(
  "K-JQ-1 since/until beyond 64 bits are -32602 and nothing is logged as internal",
  async (conn, k) => {
    for (const params of [{ since: 2n ** 64n }, { until: -(2n ** 70n) }]) {
      const err = await rpcError(conn.request("journal.query", params));
      assert.equal(err.code, ErrorCode.INVALID_PARAMS, err.message);
    }
    assert.deepEqual(await conn.request("journal.query", { until: 2n ** 63n - 1n }), []);
    assert.equal(k.stderr.filter((l) => l.includes("internal")).length, 0, k.stderr.join("\n"));
  },
);

withKernel(
  "K-JQ-4/K-EVT-7 a source naming 20,000 distinct paths leaves journal.query and the journal channel small",
  async (conn) => {
    const src = Array.from({ length: 20_000 }, (_, i) => `false && cat /p/f${i}`).join("\n");
    await conn.request("exec", { src, position: "value" });
    const rows = await conn.request("journal.query", {}) as Rec[];
    assert.equal(rows.length, 1);
    assert.ok(JSON.stringify(rows).length < 64 * 1024);
    const events = await conn.request("events.read", { channel: "journal" }) as Rec;
    assert.equal((events.events as Rec[]).length, 1);
    assert.ok(JSON.stringify(events).length < 64 * 1024);
  },
);

Deno.test({
  name:
    "K-JQ-4 an agent's rows cannot make the human's journal.query fail: after twelve runs of the widest effect report an agent may run, the human's default query still answers with its own newest row [ignored: defect found by the probe round; needs a SPEC decision: K-JQ-4 bounds each row (src 16 KiB, 100 effects of 100 paths of 1024 bytes: ~1.8 MiB as JSON when the paths are control characters) but not the result of up to `limit` rows (default 100), so a dozen such rows exceed the 16 MiB frame and every query whose window holds them is -32603 'response too large' (the claim 'never approaches the frame limit' does not hold); a byte budget for the whole result with a cursor to the rest, or a smaller per-row report, is the SPEC's choice]",
  ignore: true,
  fn: async () => {
    const k = await startKernelWithPolicy({ "agent:a": tmpRunner() });
    try {
      const a = await createToken(k.box, "agent:a");
      const human = await k.attach();
      const agent = await k.attach("default", a.secret);
      const src = widestSource("/tmp");
      for (let i = 0; i < 12; i++) await agent.request("exec", { src, position: "value" });
      await human.request("exec", { src: "echo human" });
      const rows = await human.request("journal.query", {}) as Rec[];
      assert.equal(rows[0].principal, LOCAL_HUMAN);
      assert.equal(rows.length, 13);
    } finally {
      await k.cleanup();
    }
  },
});
