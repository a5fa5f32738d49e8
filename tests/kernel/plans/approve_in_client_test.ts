// M-ELICIT-1 against the real kernel: `plan.approve`/`plan.deny` with `via: "client"` decide a
// pending plan of the caller's own principal and session only for a token attachment whose
// policy says approve_in_client and whose runs are sandboxed; the plan, the approval events and
// the journal row of the approved run record "<principal> via client".
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import type { RpcConnection } from "../../../src/protocol/rpc_client.ts";
import { collectEvents, payloads, waitForEvent } from "../../_support/events.ts";
import { exec } from "../../_support/exec.ts";
import { hostTest, NEEDS_TIER_B } from "../../_support/host.ts";
import { startKernel, type TestKernel } from "../../_support/kernel.ts";
import { asksInClient, createToken, dirAgent, writePolicy } from "../../_support/principals.ts";
import type { Rec } from "../../_support/rec.ts";
import { rpcError } from "../../_support/rejection.ts";
import { sandbox } from "../../_support/sandbox.ts";

/**
 * The agents of a kernel whose test directory is `dir`: sandboxed, their irreversible work there
 * needs approval, which their client may give (but agent:plain's).
 */
function policy(dir: string) {
  const approver = asksInClient(dir);
  return {
    "agent:c": approver,
    "agent:other": approver,
    "agent:plain": { ...approver, approve_in_client: false },
    "agent:open": { ...approver, sandbox: false },
  };
}

/** A kernel with {@link policy}, each agent attached to session `default` with its token. */
async function withAgents(
  body: (
    k: TestKernel,
    agents: Record<string, RpcConnection>,
    attach: Record<string, Rec>,
  ) => Promise<void>,
): Promise<void> {
  const box = await sandbox();
  const tokens: Record<string, string> = {};
  const agentsOf = policy(box.dir);
  for (const p of Object.keys(agentsOf)) tokens[p] = (await createToken(box, p, p)).secret;
  const k = await startKernel(["--policy", await writePolicy(box, agentsOf)], box);
  try {
    const agents: Record<string, RpcConnection> = {};
    const attach: Record<string, Rec> = {};
    for (const p of Object.keys(agentsOf)) {
      agents[p] = await k.connect();
      attach[p] = await agents[p].request("session.attach", { token: tokens[p] }) as Rec;
    }
    await body(k, agents, attach);
  } finally {
    await k.cleanup();
  }
}

/** The plan_ref of the -32011 that running `src` gets. */
async function pendingPlan(conn: RpcConnection, src: string): Promise<string> {
  const e = await rpcError(exec(conn, src));
  assert.equal(e.code, -32011, JSON.stringify(e.data));
  return (e.data as Rec).plan_ref as string;
}

hostTest(
  "plan.approve via client: the sandboxed approve_in_client agent approves its own pending plan, apply runs it, plan, event and journal row say 'agent:c via client' (M-ELICIT-1)",
  NEEDS_TIER_B,
  () =>
    withAgents(async (k, { "agent:c": agent }, attach) => {
      assert.equal((attach["agent:c"].caps as Rec).approve_in_client, true);
      const human = await k.attach();
      const events = collectEvents(human);
      await human.request("events.subscribe", { channel: "approval" });
      const victim = `${k.box.dir}/victim`;
      await Deno.writeTextFile(victim, "x");
      const ref = await pendingPlan(agent, `rm '${victim}'`);
      assert.equal(existsSync(victim), true, "nothing ran before the approval");

      const granted = await agent.request("plan.approve", { plan_ref: ref, via: "client" }) as Rec;
      assert.deepEqual(granted, {
        grant: "approved",
        plan_ref: ref,
        approved_by: "agent:c via client",
        enforced: true,
      });
      const plan = await agent.request("plan.get", { plan_ref: ref }) as Rec;
      assert.equal(plan.approval, "approved");
      assert.equal(plan.approved_by, "agent:c via client");
      await waitForEvent(events, (e) => (e.payload as Rec).event === "granted");
      const granting = payloads(events, "approval").find((p) => p.event === "granted")!;
      assert.equal(granting.by, "agent:c via client");

      const applied = await agent.request("plan.apply", {
        plan_ref: ref,
        position: "value",
      }) as Rec;
      assert.equal((applied.value as Rec).ok, true);
      assert.equal(existsSync(victim), false, "the approved plan ran");
      const rows = await agent.request("journal.query", { limit: 1 }) as Rec[];
      assert.equal(rows[0].src, `rm '${victim}'`);
      assert.equal(rows[0].approved_by, "agent:c via client");

      const again = await rpcError(agent.request("plan.approve", { plan_ref: ref, via: "client" }));
      assert.equal(again.code, -32010, "an approved plan is no longer pending");
      assert.equal((again.data as Rec).reason, "not_approver");
    }),
);

hostTest(
  "plan.deny via client: the plan becomes denied, apply is -32010 denied and nothing ran (M-ELICIT-1)",
  NEEDS_TIER_B,
  () =>
    withAgents(async (k, { "agent:c": agent }) => {
      const victim = `${k.box.dir}/victim`;
      await Deno.writeTextFile(victim, "x");
      const ref = await pendingPlan(agent, `rm '${victim}'`);
      const denied = await agent.request("plan.deny", { plan_ref: ref, via: "client" }) as Rec;
      assert.deepEqual(denied, {
        grant: "denied",
        plan_ref: ref,
        denied_by: "agent:c via client",
        reason: null,
      });
      const apply = await rpcError(agent.request("plan.apply", { plan_ref: ref }));
      assert.equal(apply.code, -32010);
      assert.equal((apply.data as Rec).reason, "denied");
      assert.equal(existsSync(victim), true);
    }),
);

hostTest(
  "plan.approve via client is -32010 not_approver for an agent without approve_in_client, an unsandboxed one, the local human, and another principal's plan; a missing via is -32602 (M-ELICIT-1)",
  NEEDS_TIER_B,
  () =>
    withAgents(async (k, agents, attach) => {
      assert.equal((attach["agent:plain"].caps as Rec).approve_in_client, false);
      assert.equal((attach["agent:open"].caps as Rec).approve_in_client, false);
      const src = `rm '${k.box.dir}/nothing'`;
      for (const name of ["agent:plain", "agent:open"]) {
        const ref = await pendingPlan(agents[name], src);
        for (const method of ["plan.approve", "plan.deny"]) {
          const e = await rpcError(agents[name].request(method, { plan_ref: ref, via: "client" }));
          assert.equal(e.code, -32010, `${name} ${method}`);
          assert.equal((e.data as Rec).reason, "not_approver");
        }
        const plan = await agents[name].request("plan.get", { plan_ref: ref }) as Rec;
        assert.equal(plan.approval, "pending", "a refusal changes nothing");
      }
      const human = await k.attach();
      const humanPlan = (await exec(human, src, { mode: "plan" })).plan_ref as string;
      const byHuman = await rpcError(
        human.request("plan.approve", { plan_ref: humanPlan, via: "client" }),
      );
      assert.equal((byHuman.data as Rec).reason, "not_approver");

      const theirs = await pendingPlan(agents["agent:other"], src);
      const foreign = await rpcError(
        agents["agent:c"].request("plan.approve", { plan_ref: theirs, via: "client" }),
      );
      assert.equal(foreign.code, -32010);
      assert.equal((foreign.data as Rec).reason, "not_approver");
      const unknown = await rpcError(
        agents["agent:c"].request("plan.approve", {
          plan_ref: `plan:${"0".repeat(32)}`,
          via: "client",
        }),
      );
      assert.equal(unknown.code, -32012);
      const noVia = await rpcError(
        agents["agent:other"].request("plan.approve", { plan_ref: theirs }),
      );
      assert.equal(noVia.code, -32602);
    }),
);

hostTest(
  "plan.approve via client of a plan the policy now denies is -32010 blocked, as approval.grant is (M-ELICIT-1 keeps K-APPR-2's rules): it answered approved and announced granted for a plan no apply would run",
  NEEDS_TIER_B,
  () =>
    withAgents(async (k, agents) => {
      const victim = `${k.box.dir}/victim`;
      await Deno.writeTextFile(victim, "kept");
      const ref = await pendingPlan(agents["agent:c"], `rm '${victim}'`);
      // The human takes the delete grant back while the form is open in the client.
      await writePolicy(k.box, {
        ...policy(k.box.dir),
        "agent:c": { ...asksInClient(k.box.dir), fs: { ...dirAgent(k.box.dir).fs, delete: [] } },
      });
      const human = await k.attach();
      const events = collectEvents(human);
      await human.request("events.subscribe", { channel: "approval" });
      const refused = await rpcError(
        agents["agent:c"].request("plan.approve", { plan_ref: ref, via: "client" }),
      );
      assert.equal(refused.code, -32010, refused.message);
      assert.equal((refused.data as Rec).reason, "blocked");
      const plan = await agents["agent:c"].request("plan.get", { plan_ref: ref }) as Rec;
      assert.notEqual(plan.approval, "approved");
      assert.equal(plan.approved_by, null);
      // a later event on the channel (another agent's pending plan): every earlier one has arrived
      const mark = await pendingPlan(agents["agent:other"], `rm '${k.box.dir}/none'`);
      await waitForEvent(events, (e) => (e.payload as Rec)?.plan_ref === mark);
      const granted = payloads(events, "approval").filter((e) => e.plan_ref === ref);
      assert.deepEqual(granted.map((e) => e.event), []);
      assert.equal(existsSync(victim), true);
    }),
);
