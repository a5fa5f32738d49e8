import assert from "node:assert/strict";
import { nowNs } from "../../../src/kernel/events/now_ns.ts";

Deno.test("nowNs strictly increases and stays within 2 ms of the wall clock", () => {
  let last = 0n;
  for (let i = 0; i < 100_000; i++) {
    const before = BigInt(Date.now()) * 1_000_000n;
    const now = nowNs();
    const after = BigInt(Date.now() + 1) * 1_000_000n;
    assert.ok(now > last, `call ${i}: ${now} after ${last}`);
    assert.ok(now >= before - 2_000_000n && now <= after + 2_000_000n, `call ${i}: ${now}`);
    last = now;
  }
});
