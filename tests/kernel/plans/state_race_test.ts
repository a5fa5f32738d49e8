/**
 * K-PLAN-3 / K-EXEC-2: what is judged is what runs. A long source's effects are derived off the
 * event loop (E-4); an exec of the same principal that ends meanwhile changes the session state
 * the run then starts from. The effects must hold for that state, not for the one before.
 */
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { kernelTest, startKernelWithPolicy } from "../../_support/kernel.ts";
import { createToken } from "../../_support/principals.ts";
import type { Rec } from "../../_support/rec.ts";

/** A comment long enough that the source is analysed off the event loop, for a while. */
const PADDING = `\n# ${"x".repeat(4_000_000)}\n`;

/** An unsandboxed agent (tier D: the static check is its only wall) that may delete in `proj`. */
const TIER_D = {
  fs: { read: ["/**"], write: ["/tmp/**"], delete: ["/tmp/*/proj/**"] },
  proc_spawn: ["*"],
  session_write: true,
  env_read: ["*"],
  env_write: ["*"],
  auto_apply: "in-grant",
  opaque: "deny",
};

/** `rm -f "$T"` with `T` naming `cache` when judged, and an exec that sets T to `victim` meanwhile. */
async function racedRemove(
  agent: Awaited<ReturnType<Parameters<Parameters<typeof kernelTest>[1]>[0]["attach"]>>,
  victim: string,
  run: () => Promise<unknown>,
): Promise<unknown> {
  // started first (W-RPC-4), it ends while the run's long source is still being analysed
  const racing = agent.request("exec", { src: `sleep 0.3; export T='${victim}'`, async: true });
  const outcome = await run().then((r) => r, (e) => e);
  await racing;
  return outcome;
}

kernelTest(
  "K-EXEC-2 an exec's effects hold for the state it runs in: an agent's export ending while its long `rm -f \"$T\"` was analysed made the rm delete a file outside its grants, judged as the one inside (tier D)",
  async (k) => {
    await Deno.mkdir(`${k.box.dir}/proj`);
    const cache = `${k.box.dir}/proj/cache`;
    const victim = `${k.box.dir}/victim`;
    await Deno.writeTextFile(cache, "c");
    await Deno.writeTextFile(victim, "kept");
    const agent = await k.attach("default", (await createToken(k.box, "agent:a")).secret);
    await agent.request("exec", { src: `export T='${cache}'` });
    const direct = await agent.request("exec", { src: `rm -f '${victim}'` }).catch((e) => e);
    assert.equal((direct as { code?: number }).code, -32010, "outside its grants");
    await racedRemove(
      agent,
      victim,
      () => agent.request("exec", { src: `rm -f "$T"; exit 0${PADDING}`, position: "value" }),
    );
    assert.equal(existsSync(victim), true, "the rm ran with a T nobody judged");
  },
  () => startKernelWithPolicy({ "agent:a": TIER_D }),
);

kernelTest(
  'K-PLAN-3 an approved plan runs only with the state its effects were checked against: an agent\'s export ending while the apply analysed its long `rm -f "$T"` made the approved plan delete another file (no stale_plan)',
  async (k) => {
    await Deno.mkdir(`${k.box.dir}/proj`);
    const cache = `${k.box.dir}/proj/cache`;
    const victim = `${k.box.dir}/proj/victim`;
    await Deno.writeTextFile(cache, "c");
    await Deno.writeTextFile(victim, "kept");
    const agent = await k.attach("default", (await createToken(k.box, "agent:a")).secret);
    const human = await k.attach();
    await agent.request("exec", { src: `export T='${cache}'` });
    const plan = await agent.request("exec", {
      src: `rm -f "$T"; exit 0${PADDING}`,
      mode: "plan",
    }) as Rec;
    assert.equal(plan.approval, "pending", "a delete needs the human (auto_apply reversible)");
    await human.request("approval.grant", { plan_ref: plan.plan_ref });
    const applied = await racedRemove(
      agent,
      victim,
      () => agent.request("plan.apply", { plan_ref: plan.plan_ref, position: "value" }),
    ) as Rec;
    assert.equal(existsSync(victim), true, "the approved plan deleted a file nobody approved");
    // refused as stale, or run with the T it was checked with
    const data = (applied as { data?: Rec }).data;
    assert.ok(data?.reason === "stale_plan" || !existsSync(cache), JSON.stringify(applied));
  },
  () =>
    startKernelWithPolicy({
      "agent:a": { ...TIER_D, auto_apply: "reversible", opaque: "ask" },
    }),
);
