import assert from "node:assert/strict";
import { PlanStore } from "../../../src/kernel/plans/store.ts";

const MIB = 1024 * 1024;

function plan(src: string, session = "s", principal = "agent:a") {
  return {
    src,
    session,
    principal,
    cwd: "/",
    ast: null,
    effects: [],
    written: [],
    reversibility: "reversible" as const,
    approval: "pending" as const,
  };
}

Deno.test("E-3 the plans of one (session, principal) hold at most 64 MiB of source: storing more evicts the oldest", () => {
  const store = new PlanStore();
  const other = store.store(plan("x".repeat(30 * MIB), "s", "agent:b"));
  const refs = Array.from(
    { length: 17 },
    (_, i) => store.store(plan(String(i % 10).repeat(4 * MIB))).ref,
  );
  // 17 × 4 MiB = 68 MiB: the oldest plan went, the 16 newest (64 MiB) stay.
  assert.throws(() => store.lookup(refs[0]), (e: { code?: number }) => e.code === -32012);
  assert.deepEqual(store.listFor("s", "agent:a").map((p) => p.ref), refs.slice(1));
  const wide = store.store(plan("é".repeat(5 * MIB))); // 10 MiB of UTF-8
  assert.deepEqual(store.listFor("s", "agent:a").map((p) => p.ref), [...refs.slice(4), wide.ref]);
  // Another principal's plans are neither counted nor evicted.
  assert.equal(store.lookup(other.ref).principal, "agent:b");
});
