import assert from "node:assert/strict";
import { kernelTest, startKernelWithPolicy } from "../../_support/kernel.ts";
import { createToken, writePolicy } from "../../_support/principals.ts";
import type { Rec } from "../../_support/rec.ts";
import { rpcError } from "../../_support/rejection.ts";

kernelTest(
  "E-4/P-PRIN-1 a run by a principal with no policy entry is refused before its source is parsed",
  async (k) => {
    const ghost = await k.attach("default", (await createToken(k.box, "agent:ghost")).secret);
    // A syntax error would be -32001 had the source been parsed first.
    const denied = await rpcError(ghost.request("exec", { src: "if then fi (" }));
    assert.equal(denied.code, -32010, denied.message);
    assert.deepEqual(denied.data, { verdict: "deny", effects: [], reason: "unknown_principal" });
    const human = await k.attach();
    const e = await rpcError(human.request("exec", { src: "if then fi (" }));
    assert.equal(e.code, -32001, "a known principal still gets the parse error");
    assert.equal(((await human.request("exec", { src: "echo ok" }) as Rec).value as Rec).ok, true);
  },
);

kernelTest(
  "P-PRIN-1/P-SBX-2 an approved plan of an agent the human then removed from the policy is refused, not run unconfined as the human (plan.apply ran it, the unknown principal no longer sandboxed, and read HOME)",
  async (k) => {
    const home = `${k.box.dir}/home`;
    await Deno.mkdir(`${home}/proj`, { recursive: true });
    await Deno.writeTextFile(`${home}/secret`, "the human's secret");
    const { secret } = await createToken(k.box, "agent:a");
    const human = await k.attach();
    await human.request("exec", { src: `cd ${home}/proj` });
    const agent = await k.attach("default", secret);
    const src = "sh -c 'cat \"$HOME/secret\"'";
    const plan = await agent.request("exec", { src, mode: "plan" }) as Rec;
    assert.equal(plan.approval, "pending");
    await human.request("approval.grant", { plan_ref: plan.plan_ref });
    await agent.request("plan.apply", { plan_ref: plan.plan_ref, position: "value" });

    await writePolicy(k.box, {});
    for (const conn of [agent, await k.attach("default", secret)]) {
      const applied = await rpcError(conn.request("plan.apply", { plan_ref: plan.plan_ref }));
      assert.equal(applied.code, -32010, applied.message);
      assert.equal((applied.data as Rec).reason, "unknown_principal");
      const approved = await rpcError(
        conn.request("exec", { src, mode: "approved", plan_ref: plan.plan_ref }),
      );
      assert.equal(approved.code, -32010, approved.message);
    }
    const rows = await human.request("journal.query", { principal: "agent:a" }) as Rec[];
    assert.equal(rows.length, 1, "only the run before the removal");
  },
  () =>
    startKernelWithPolicy({
      "agent:a": {
        fs: { read: ["~/proj/**"], write: ["~/proj/**"] },
        proc_spawn: ["*"],
        opaque: "allow",
        auto_apply: "never",
        sandbox: true,
      },
    }),
);
