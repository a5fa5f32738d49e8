// Issue 5 through the real stack (SDK clients → shoal-mcp → autostarted kernel → bash): journal
// scoping by principal, the approval flow of an agent acting under a token with a policy file,
// the local human approving from the CLI, and plans readable only by their owner.
import assert from "node:assert/strict";
import { createToken, kernelCli, LOCAL_HUMAN, writePolicy } from "../_support/principals.ts";
import type { Rec } from "../_support/rec.ts";
import { connectMcp, mcpError, mcpTest } from "./_mcp.ts";

mcpTest(
  "agent under a token: touch x needs approval (-32011 with plan_ref), cap_request stays pending, the human approves via the CLI, shoal_apply runs it; journal rows carry the agent principal and are scoped (K-EXEC-2, K-CAP-1, K-APPR-2, K-CLI-3, K-JQ-3)",
  async (human, box) => {
    const work = `${box.dir}/work`;
    await Deno.mkdir(work);
    await human.ok("shoal_exec", { src: `cd '${work}'` });
    await human.ok("shoal_exec", { src: "echo human" });

    const agent = await connectMcp(box, {
      SHOAL_TOKEN: (await createToken(box, "agent:a", "a")).secret,
    });
    try {
      const echoed = await agent.ok("shoal_exec", { src: "echo agent" });
      assert.deepEqual((echoed.value as Rec).out, { $: "str", v: "agent\n" });

      const refused = await agent.call("shoal_exec", { src: "touch x" });
      assert.equal(refused.isError, true);
      const error = refused.structuredContent as { code: number; data: Rec };
      assert.equal(error.code, -32011);
      assert.equal(error.data.verdict, "approval_required");
      const planRef = String(error.data.plan_ref);
      assert.match(planRef, /^plan:[0-9a-f]{32}$/);
      assert.deepEqual(refused.content[1], {
        type: "resource_link",
        uri: `shoal://plan/${planRef.slice(5)}`,
        name: planRef,
        mimeType: "application/json",
      });
      assert.equal(await exists(`${work}/x`), false, "nothing ran");

      const request = await agent.ok("shoal_cap_request", { plan_ref: planRef });
      assert.equal(request.grant, "approval_pending");
      assert.equal(request.why, "awaiting_approver");
      assert.equal(request.requested_by, "agent:a");
      const early = await agent.call("shoal_apply", { plan_ref: planRef });
      assert.equal(early.structuredContent.code, -32011, "not applicable before approval");
      assert.equal(await exists(`${work}/x`), false);

      const cli = await kernelCli(box, ["approve", planRef, "--socket", box.socket()]);
      assert.equal(cli.code, 0, cli.stderr);
      const granted = JSON.parse(cli.stdout);
      assert.equal(granted.grant, "approved");
      assert.equal(granted.approved_by, LOCAL_HUMAN);

      const applied = await agent.ok("shoal_apply", { plan_ref: planRef });
      assert.equal((applied.value as Rec).ok, true);
      assert.equal(await exists(`${work}/x`), true, "the approved plan ran");

      const mine = (await agent.ok("shoal_journal", {})).items as Rec[];
      assert.deepEqual(mine.map((r) => r.src), ["touch x", "echo agent"]);
      assert.ok(mine.every((r) => r.principal === "agent:a"), "an agent sees only its own rows");
      assert.equal(mine[0].ok, true);
      const other = await agent.call("shoal_journal", { principal: LOCAL_HUMAN });
      assert.equal(other.structuredContent.code, -32010);
      const viaResource = await agent.read("shoal://journal?head=echo&limit=1");
      const rows = viaResource.structuredContent as Rec[];
      assert.equal(rows.length, 1);
      assert.equal(rows[0].src, "echo agent");

      const all = (await human.ok("shoal_journal", { head: "touch" })).items as Rec[];
      assert.deepEqual(all.map((r) => [r.src, r.principal]), [["touch x", "agent:a"]]);
      const approvals = (await human.read("shoal://events/approval")).structuredContent as Rec;
      const flow = (approvals.events as Rec[])
        .map((e) => e.payload as Rec)
        .filter((p) => p.plan_ref === planRef)
        .map((p) => [p.event, p.by]);
      assert.deepEqual(flow, [
        ["pending", null],
        ["requested", "agent:a"],
        ["granted", LOCAL_HUMAN],
      ]);
    } finally {
      await agent.close();
    }
  },
  async (box) => {
    await writePolicy(`${box.dir}/config/shoal/leash.jsonc`, {
      "agent:a": {
        fs: { read: ["/**"], write: [`${box.dir}/work/**`] },
        proc_spawn: ["*"],
        session_write: true,
        auto_apply: "reversible",
      },
    });
    return { XDG_CONFIG_HOME: `${box.dir}/config` };
  },
);

mcpTest(
  "shoal_plan returns a plan_ref whose shoal://plan/<hex> the owner reads, while another principal's facade is refused (-32010) and a guessed ref is unknown (-32012) (K-EXEC-7, K-PLAN-1, P-PLAN-2)",
  async (human, box) => {
    const agent = await connectMcp(box, {
      SHOAL_TOKEN: (await createToken(box, "agent:p", "p")).secret,
    });
    try {
      const src = "rm -rf ./never-run";
      const planned = await agent.ok("shoal_plan", { src });
      const planRef = String(planned.plan_ref);
      assert.match(planRef, /^plan:[0-9a-f]{32}$/);
      const hex = planRef.slice(5);
      assert.equal(planned.uri, `shoal://plan/${hex}`);
      assert.equal(planned.approval, "pending");
      assert.equal(planned.reversibility, "irreversible");

      const plan = (await agent.read(`shoal://plan/${hex}`)).structuredContent as Rec;
      assert.equal(plan.plan_ref, planRef);
      assert.equal(plan.src, src);
      assert.equal(plan.principal, "agent:p");
      const short = (await agent.read(`shoal://plan/${planRef}`)).structuredContent as Rec;
      assert.equal(short.plan_ref, planRef, "the plan: prefix form names the same plan");

      const foreign = await mcpError(human.read(`shoal://plan/${hex}`));
      assert.equal(foreign.code, -32602);
      assert.equal((foreign.data as Rec).code, -32010);
      const humanPlan = await human.ok("shoal_plan", { src });
      assert.notEqual(humanPlan.plan_ref, planRef, "same source, different principal, new ref");
      const guessed = await mcpError(agent.read(`shoal://plan/${"0".repeat(32)}`));
      assert.equal((guessed.data as Rec).code, -32012);
      const apply = await human.call("shoal_apply", { plan_ref: planRef });
      assert.equal(apply.structuredContent.code, -32010);
    } finally {
      await agent.close();
    }
  },
  async (box) => {
    await writePolicy(`${box.dir}/config/shoal/leash.jsonc`, {
      "agent:p": { fs: { read: ["/**"], delete: ["/**"] }, proc_spawn: ["*"] },
    });
    return { XDG_CONFIG_HOME: `${box.dir}/config` };
  },
);

async function exists(path: string): Promise<boolean> {
  try {
    await Deno.lstat(path);
    return true;
  } catch {
    return false;
  }
}
