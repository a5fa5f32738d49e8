import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { PlanStore } from "../../../src/kernel/plans/store.ts";
import { RpcError } from "../../../src/protocol/errors.ts";
import type { RpcConnection } from "../../../src/protocol/rpc_client.ts";
import { collectEvents, payloads, waitForEvent } from "../../_support/events.ts";
import { kernelTest, startKernelWithPolicy, type TestKernel } from "../../_support/kernel.ts";
import { createToken, kernelCli, LOCAL_HUMAN } from "../../_support/principals.ts";
import { exec } from "../../_support/exec.ts";
import type { Rec } from "../../_support/rec.ts";
import { rpcError } from "../../_support/rejection.ts";
import { tmpRunner, widestSource } from "../../_support/wide_effects.ts";

/** Grants everything on the filesystem, but irreversible work needs approval (auto_apply). */
const AGENT = {
  fs: { read: ["/**"], write: ["/**"], delete: ["/**"] },
  proc_spawn: ["*"],
  session_write: true,
  auto_apply: "reversible",
  opaque: "ask",
};

const PLAN_REF = /^plan:[0-9a-f]{32}$/;

/** A kernel running `policy` (principal → entry) with one attached connection per named agent. */
function withAgents(
  name: string,
  policy: Record<string, Rec>,
  body: (k: TestKernel, agents: Record<string, RpcConnection>) => Promise<void>,
) {
  kernelTest(name, async (k) => {
    const agents: Record<string, RpcConnection> = {};
    for (const principal of Object.keys(policy)) {
      if (principal.startsWith("uid:")) continue;
      agents[principal] = await k.attach("default", (await createToken(k.box, principal)).secret);
    }
    await body(k, agents);
  }, () => startKernelWithPolicy(policy));
}

async function planOf(conn: RpcConnection, src: string): Promise<string> {
  const p = await exec(conn, src, { mode: "plan" });
  assert.match(p.plan_ref as string, PLAN_REF);
  return p.plan_ref as string;
}

withAgents(
  "touch x needs approval: -32011 with plan_ref, cap.request leaves it requested, the human grants, apply runs as the agent (K-EXEC-2, K-CAP-1, K-APPR-2, K-PLAN-3)",
  { "agent:a": AGENT },
  async (k, { "agent:a": agent }) => {
    const human = await k.attach();
    const watched = collectEvents(human);
    await human.request("events.subscribe", { channel: "approval" });

    const e = await rpcError(exec(agent, "touch x"));
    assert.equal(e.code, -32011);
    const data = e.data as Rec;
    assert.equal(data.verdict, "approval_required");
    const ref = data.plan_ref as string;
    assert.match(ref, PLAN_REF);
    assert.equal(existsSync(`${k.box.dir}/x`), false);
    assert.deepEqual((data.effects as Rec[]).map((x) => x.kind), ["fs_write", "proc_spawn"]);

    const asked = await agent.request("cap.request", { plan_ref: ref }) as Rec;
    assert.equal(asked.grant, "approval_pending");
    assert.equal(asked.why, "awaiting_approver");
    assert.equal(asked.requested_by, "agent:a");
    assert.deepEqual(asked.requested_effects, ["fs_write", "proc_spawn"]);
    const requested = await agent.request("plan.get", { plan_ref: ref }) as Rec;
    assert.equal(requested.approval, "requested");
    assert.equal(requested.approved, false);
    assert.equal(requested.approval_pending, true);
    assert.equal((await rpcError(agent.request("plan.apply", { plan_ref: ref }))).code, -32011);

    const granted = await human.request("approval.grant", { plan_ref: ref }) as Rec;
    assert.deepEqual(granted, {
      grant: "approved",
      plan_ref: ref,
      approved_by: LOCAL_HUMAN,
      enforced: false,
    });
    const approved = await agent.request("plan.get", { plan_ref: ref }) as Rec;
    assert.equal(approved.approval, "approved");
    assert.equal(approved.approved_by, LOCAL_HUMAN);
    assert.equal(approved.approval_pending, false);

    const run = await agent.request("plan.apply", { plan_ref: ref }) as Rec;
    assert.equal((run.value as Rec).ok, true);
    assert.equal(existsSync(`${k.box.dir}/x`), true);
    // An approval stays valid for repeated applies.
    await agent.request("plan.apply", { plan_ref: ref });

    await waitForEvent(watched, (ev) => (ev.payload as Rec).event === "granted");
    const flow = payloads(watched, "approval").map((p) => [p.event, p.by, p.principal, p.plan_ref]);
    assert.deepEqual(flow, [
      ["pending", null, "agent:a", ref],
      ["requested", "agent:a", "agent:a", ref],
      ["granted", LOCAL_HUMAN, "agent:a", ref],
    ]);
    const rows = await human.request("journal.query", { head: "touch" }) as Rec[];
    assert.equal(rows.length, 2);
    assert.ok(rows.every((r) => r.principal === "agent:a" && r.ok === true));
  },
);

withAgents(
  "shoal-kernel approve <plan_ref> grants over the socket as the local human (K-CLI-3)",
  { "agent:a": AGENT },
  async (k, { "agent:a": agent }) => {
    const watched = collectEvents(agent);
    await agent.request("events.subscribe", { channel: "approval" });
    const ref = (await rpcError(exec(agent, "touch y"))).data as Rec;
    await agent.request("cap.request", { plan_ref: ref.plan_ref });
    const cli = await kernelCli(k.box, ["approve", ref.plan_ref as string, "--socket", k.socket]);
    assert.equal(cli.code, 0, cli.stderr);
    const printed = JSON.parse(cli.stdout);
    assert.equal(cli.stdout.trim(), JSON.stringify(printed));
    assert.deepEqual(printed, {
      grant: "approved",
      plan_ref: ref.plan_ref,
      approved_by: LOCAL_HUMAN,
      enforced: false,
    });
    await agent.request("plan.apply", { plan_ref: ref.plan_ref });
    assert.equal(existsSync(`${k.box.dir}/y`), true);
    await waitForEvent(watched, (ev) => (ev.payload as Rec).event === "granted");
    assert.deepEqual(payloads(watched, "approval").map((p) => [p.event, p.by]), [
      ["pending", null],
      ["requested", "agent:a"],
      ["granted", LOCAL_HUMAN],
    ]);
  },
);

withAgents(
  "approval.deny and shoal-kernel deny --reason: plan denied, apply and cap.request -32010 reason denied; a later grant approves (K-APPR-3, P-PLAN-4)",
  { "agent:a": AGENT },
  async (k, { "agent:a": agent }) => {
    const human = await k.attach();
    const watched = collectEvents(human);
    await human.request("events.subscribe", { channel: "approval" });
    const first = await planOf(agent, "touch denied-1");
    await agent.request("cap.request", { plan_ref: first });
    const denied = await human.request("approval.deny", { plan_ref: first, reason: "no" }) as Rec;
    assert.deepEqual(denied, {
      grant: "denied",
      plan_ref: first,
      denied_by: LOCAL_HUMAN,
      reason: "no",
    });
    const e = await rpcError(agent.request("plan.apply", { plan_ref: first }));
    assert.equal(e.code, -32010);
    assert.equal((e.data as Rec).reason, "denied");
    assert.equal((await rpcError(agent.request("cap.request", { plan_ref: first }))).code, -32010);
    assert.equal((await agent.request("plan.get", { plan_ref: first }) as Rec).approval, "denied");

    const second = await planOf(agent, "touch denied-2");
    const cli = await kernelCli(k.box, [
      "deny",
      second,
      "--reason",
      "touches too much",
      "--socket",
      k.socket,
    ]);
    assert.equal(cli.code, 0, cli.stderr);
    assert.deepEqual(JSON.parse(cli.stdout), {
      grant: "denied",
      plan_ref: second,
      denied_by: LOCAL_HUMAN,
      reason: "touches too much",
    });
    const e2 = await rpcError(agent.request("plan.apply", { plan_ref: second }));
    assert.equal((e2.data as Rec).reason, "denied");
    assert.equal(existsSync(`${k.box.dir}/denied-2`), false);

    await human.request("approval.grant", { plan_ref: second });
    await agent.request("plan.apply", { plan_ref: second });
    assert.equal(existsSync(`${k.box.dir}/denied-2`), true);

    await waitForEvent(watched, (ev) => (ev.payload as Rec).event === "granted");
    assert.deepEqual(
      payloads(watched, "approval").filter((p) => p.event === "denied").map((p) => [
        p.plan_ref,
        p.by,
        p.reason,
      ]),
      [[first, LOCAL_HUMAN, "no"], [second, LOCAL_HUMAN, "touches too much"]],
    );
  },
);

withAgents(
  "approval.list: approvers see every awaiting plan, others only their own; agents cannot grant (K-APPR-1, K-APPR-4)",
  { "agent:a": AGENT, "agent:b": AGENT, "agent:boss": { ...AGENT, approver: true } },
  async (k, { "agent:a": a, "agent:b": b, "agent:boss": boss }) => {
    const human = await k.attach("elsewhere");
    const bSees = collectEvents(b);
    const bossSees = collectEvents(boss);
    await b.request("events.subscribe", { channel: "approval" });
    await boss.request("events.subscribe", { channel: "approval" });
    const aRef = await planOf(a, "touch from-a");
    await a.request("cap.request", { plan_ref: aRef });
    const bRef = await planOf(b, "touch from-b");
    await planOf(b, "echo fine");

    const refs = async (conn: RpcConnection) =>
      ((await conn.request("approval.list", {}) as Rec).requests as Rec[]).map((r) => r.plan_ref);
    // Non-approvers see only approval events of their own plans; they arrive in seq order (K-EVT-8).
    await waitForEvent(bSees, (ev) => (ev.payload as Rec).plan_ref === bRef);
    assert.deepEqual(payloads(bSees, "approval").map((p) => p.plan_ref), [bRef]);
    await waitForEvent(bossSees, (ev) => (ev.payload as Rec).plan_ref === bRef);
    assert.deepEqual(payloads(bossSees, "approval").map((p) => [p.event, p.plan_ref]), [
      ["pending", aRef],
      ["requested", aRef],
      ["pending", bRef],
    ]);
    const bRead = await b.request("events.read", { channel: "approval", since: -1 }) as Rec;
    assert.deepEqual((bRead.events as Rec[]).map((e) => e.seq), [2]);

    assert.deepEqual(await refs(human), [bRef, aRef]);
    assert.deepEqual(await refs(boss), [bRef, aRef]);
    assert.deepEqual(await refs(a), [aRef]);
    assert.deepEqual(await refs(b), [bRef]);
    const item = ((await human.request("approval.list", {}) as Rec).requests as Rec[])[1];
    assert.equal(item.principal, "agent:a");
    assert.equal(item.session, "default");
    assert.equal(item.src, "touch from-a");
    assert.equal(item.src_truncated, false);
    assert.equal(item.approval, "requested");
    assert.equal(item.requested_by, "agent:a");
    assert.deepEqual(item.cwd, { display: k.box.dir });
    assert.deepEqual(item.needs_approval, [
      `reversibility "${item.reversibility}" (the policy says auto_apply "reversible")`,
    ]);

    const cli = await kernelCli(k.box, ["approvals", "--socket", k.socket]);
    assert.equal(cli.code, 0, cli.stderr);
    assert.deepEqual(
      (JSON.parse(cli.stdout).requests as Rec[]).map((r) => r.plan_ref),
      [bRef, aRef],
    );

    const e = await rpcError(b.request("approval.grant", { plan_ref: aRef }));
    assert.equal(e.code, -32010);
    assert.equal((e.data as Rec).reason, "not_approver");
    assert.equal((await rpcError(a.request("approval.grant", { plan_ref: aRef }))).code, -32010);
    assert.equal((await rpcError(a.request("approval.deny", { plan_ref: aRef }))).code, -32010);

    // A policy approver other than the local human may decide, from any session.
    const byBoss = await boss.request("approval.grant", { plan_ref: bRef }) as Rec;
    assert.equal(byBoss.approved_by, "agent:boss");
    await human.request("approval.grant", { plan_ref: aRef });
    assert.deepEqual(await refs(human), []);
  },
);

withAgents(
  "self-approval only when self_approve covers every effect kind; uncovered named effects record nothing (K-CAP-1 steps 3-4)",
  {
    "agent:self": { ...AGENT, self_approve: ["fs.write", "proc_spawn"] },
    "agent:half": { ...AGENT, self_approve: ["fs_write"] },
  },
  async (k, { "agent:self": self, "agent:half": half }) => {
    const human = await k.attach();
    const watched = collectEvents(human);
    await human.request("events.subscribe", { channel: "approval" });

    const ref = await planOf(self, "touch self-made");
    const partial = await self.request("cap.request", {
      plan_ref: ref,
      effects: ["fs.write"],
    }) as Rec;
    assert.deepEqual(partial, {
      grant: "approval_pending",
      plan_ref: ref,
      why: "uncovered_effects",
      uncovered_effects: ["proc_spawn"],
    });
    assert.equal((await self.request("plan.get", { plan_ref: ref }) as Rec).approval, "pending");
    const bad = await rpcError(
      self.request("cap.request", { plan_ref: ref, effects: ["fs.nope"] }),
    );
    assert.equal(bad.code, -32602);

    const got = await self.request("cap.request", {
      plan_ref: ref,
      effects: ["fs_write", { kind: "proc.spawn" }],
    }) as Rec;
    assert.deepEqual(got, {
      grant: "approved",
      plan_ref: ref,
      approved_by: "agent:self",
      enforced: false,
      granted_effects: ["fs_write", "proc_spawn"],
    });
    await self.request("plan.apply", { plan_ref: ref });
    assert.equal(existsSync(`${k.box.dir}/self-made`), true);
    const again = await self.request("cap.request", { plan_ref: ref }) as Rec;
    assert.equal(again.grant, "approved");
    assert.equal(again.approved_by, "agent:self");

    const halfRef = await planOf(half, "touch half-made");
    const pending = await half.request("cap.request", { plan_ref: halfRef }) as Rec;
    assert.equal(pending.grant, "approval_pending");
    assert.equal(pending.why, "awaiting_approver");
    const repeat = await half.request("cap.request", { plan_ref: halfRef }) as Rec;
    assert.equal(repeat.requested_ns, pending.requested_ns);

    const allowed = await planOf(half, "echo allowed");
    const byPolicy = await half.request("cap.request", { plan_ref: allowed }) as Rec;
    assert.equal(byPolicy.grant, "approved");
    assert.equal(byPolicy.approved_by, "policy");

    await waitForEvent(watched, (ev) =>
      (ev.payload as Rec).plan_ref === halfRef &&
      (ev.payload as Rec).event === "requested");
    assert.deepEqual(payloads(watched, "approval").map((p) => [p.event, p.by]), [
      ["pending", null],
      ["granted", "agent:self"],
      ["pending", null],
      ["requested", "agent:half"],
    ]);
  },
);

withAgents(
  "plan refs are 128-bit random, bound to principal and session, never overwritten; guessed refs are -32012 (P-PLAN-1/2, K-PLAN-1)",
  { "agent:a": AGENT, "agent:b": AGENT },
  async (k, { "agent:a": a, "agent:b": b }) => {
    const src = "touch same";
    const aRef = await planOf(a, src);
    const bRef = await planOf(b, src);
    assert.notEqual(aRef, bRef);
    const aRef2 = await planOf(a, src);
    assert.notEqual(aRef2, aRef);

    for (
      const [method, params] of [
        ["plan.get", { plan_ref: bRef }],
        ["plan.apply", { plan_ref: bRef }],
        ["cap.request", { plan_ref: bRef }],
      ] as const
    ) {
      const e = await rpcError(a.request(method, params));
      assert.equal(e.code, -32010, method);
    }
    assert.equal((await rpcError(b.request("plan.get", { plan_ref: aRef }))).code, -32010);
    const guessed = `plan:${"0".repeat(31)}1`;
    for (const method of ["plan.get", "plan.apply", "cap.request"]) {
      assert.equal((await rpcError(a.request(method, { plan_ref: guessed }))).code, -32012);
    }
    const human = await k.attach();
    assert.equal(
      (await rpcError(human.request("approval.grant", { plan_ref: guessed }))).code,
      -32012,
    );

    // B's cap.request and the second plan of A leave A's first plan as it was.
    await b.request("cap.request", { plan_ref: bRef });
    await a.request("cap.request", { plan_ref: aRef2 });
    const first = await a.request("plan.get", { plan_ref: aRef }) as Rec;
    assert.equal(first.approval, "pending");
    assert.equal(first.principal, "agent:a");
    assert.equal(first.src, src);
    const listed = (await a.request("plan.list", {}) as Rec[]).map((p) => p.plan_ref);
    assert.deepEqual(listed, [aRef, aRef2]);

    // The same principal in another session does not own the plan either.
    const token = await createToken(k.box, "agent:a");
    const elsewhere = await k.attach("other", token.secret);
    assert.equal((await rpcError(elsewhere.request("plan.get", { plan_ref: aRef }))).code, -32010);
    assert.deepEqual(await elsewhere.request("plan.list", {}), []);
  },
);

withAgents(
  "a plan whose effects changed since planning is stale_plan on apply; approved mode needs the exact src (K-PLAN-3, K-EXEC-9)",
  { "agent:a": AGENT },
  async (k, { "agent:a": agent }) => {
    await Deno.mkdir(`${k.box.dir}/sub`);
    const human = await k.attach();
    const ref = await planOf(agent, "touch stale");
    await human.request("approval.grant", { plan_ref: ref });

    const mismatch = await rpcError(
      exec(agent, "touch other", { mode: "approved", plan_ref: ref }),
    );
    assert.equal(mismatch.code, -32010);
    const noRef = await rpcError(exec(agent, "touch stale", { mode: "approved" }));
    assert.equal(noRef.code, -32010);
    const guessed = await rpcError(
      exec(agent, "touch stale", { mode: "approved", plan_ref: `plan:${"a".repeat(32)}` }),
    );
    assert.equal(guessed.code, -32010);
    assert.equal(existsSync(`${k.box.dir}/other`), false);

    await exec(human, "cd sub");
    const e = await rpcError(agent.request("plan.apply", { plan_ref: ref }));
    assert.equal(e.code, -32010);
    const data = e.data as Rec;
    assert.equal(data.reason, "stale_plan");
    assert.deepEqual((data.effects as Rec[])[0], {
      kind: "fs_write",
      paths: [`${k.box.dir}/sub/stale`],
    });
    assert.equal(
      (await rpcError(exec(agent, "touch stale", { mode: "approved", plan_ref: ref }))).code,
      -32010,
    );
    await exec(human, "cd ..");
    const run = await exec(agent, "touch stale", { mode: "approved", plan_ref: ref });
    assert.equal((run.value as Rec).ok, true);
    assert.equal(existsSync(`${k.box.dir}/stale`), true);
  },
);

withAgents(
  "explain derives effects from the bash AST: rm -rf is irreversible fs_delete, eval is opaque (K-EXPL-1, K-EFF-5)",
  { "agent:ask": AGENT, "agent:strict": { ...AGENT, opaque: "deny" } },
  async (k, { "agent:ask": ask, "agent:strict": strict }) => {
    const rm = await ask.request("explain", { src: "rm -rf ./x" }) as Rec;
    assert.deepEqual(rm.effects, [
      { kind: "fs_delete", paths: [`${k.box.dir}/x`] },
      { kind: "proc_spawn", argv0: "rm", bin_hash: null },
    ]);
    assert.equal(rm.reversibility, "irreversible");
    assert.equal(rm.verdict, "approval_required");
    assert.equal(rm.plan_ref, null);
    assert.equal((rm.ast as Rec).type, "File");

    const ev = await ask.request("explain", { src: 'eval "$X"' }) as Rec;
    assert.ok((ev.effects as Rec[]).some((e) => e.kind === "opaque"));
    assert.equal(ev.reversibility, "unknown");
    assert.equal(ev.verdict, "approval_required");
    assert.equal((await strict.request("explain", { src: 'eval "$X"' }) as Rec).verdict, "deny");

    const denied = await rpcError(exec(strict, 'eval "echo hi"'));
    assert.equal(denied.code, -32010);
    assert.equal((denied.data as Rec).verdict, "deny");
    const asked = await rpcError(exec(ask, 'eval "echo hi"'));
    assert.equal(asked.code, -32011);
    assert.match((asked.data as Rec).plan_ref as string, PLAN_REF);
    assert.equal((await rpcError(exec(ask, "if true; then"))).code, -32001);
    assert.deepEqual(await ask.request("journal.query", {}), []);
  },
);

withAgents(
  "a hermetic principal is refused without an enforcing sandbox (K-EXEC-2, P-SBX-1)",
  { "agent:h": { ...AGENT, auto_apply: "in-grant", hermetic: true } },
  async (_k, { "agent:h": h }) => {
    const e = await rpcError(exec(h, "echo hi"));
    assert.equal(e.code, -32010);
    assert.equal((e.data as Rec).reason, "hermetic_unavailable");
    const ref = await planOf(h, "echo hi");
    const applied = await rpcError(h.request("plan.apply", { plan_ref: ref }));
    assert.equal((applied.data as Rec).reason, "hermetic_unavailable");
    assert.deepEqual(await h.request("journal.query", {}), []);
  },
);

withAgents(
  "plan.list items are plan.get without ast, src and cwd; approval_pending needs verdict approval_required and no decision; blocked plans refuse everything (K-PLAN-1/2/3, K-CAP-1, K-APPR-2/3)",
  { "agent:a": AGENT },
  async (k, { "agent:a": agent }) => {
    const human = await k.attach();
    const allowed = await planOf(agent, "echo fine");
    const asked = await planOf(agent, "touch asked");
    const blocked = await planOf(agent, "curl https://example.com/");
    const get = (ref: string) => agent.request("plan.get", { plan_ref: ref }) as Promise<Rec>;

    const listed = await agent.request("plan.list", {}) as Rec[];
    assert.deepEqual(listed.map((p) => p.plan_ref), [allowed, asked, blocked]);
    for (const item of listed) {
      const { ast, src, cwd, ...rest } = await get(item.plan_ref as string);
      assert.equal((ast as Rec).type, "File");
      assert.equal(typeof src, "string");
      assert.deepEqual(cwd, { display: k.box.dir });
      assert.deepEqual(item, rest);
      assert.equal(item.ast_version, 1);
      assert.equal(item.ast_lang, "bash");
    }
    const state = async (ref: string) => {
      const p = await get(ref);
      return [p.verdict, p.approval, p.approval_pending, p.approved];
    };
    assert.deepEqual(await state(allowed), ["allow", "not_required", false, false]);
    assert.deepEqual(await state(asked), ["approval_required", "pending", true, false]);
    assert.deepEqual(await state(blocked), ["deny", "blocked", false, false]);

    await human.request("approval.deny", { plan_ref: asked });
    assert.deepEqual(await state(asked), ["approval_required", "denied", false, false]);

    // A blocked plan can never be requested, granted, denied or applied.
    for (
      const call of [
        () => agent.request("plan.apply", { plan_ref: blocked }),
        () => agent.request("cap.request", { plan_ref: blocked }),
        () => human.request("approval.grant", { plan_ref: blocked }),
        () => human.request("approval.deny", { plan_ref: blocked }),
      ]
    ) {
      assert.equal((await rpcError(call())).code, -32010);
    }
    const applied = await rpcError(agent.request("plan.apply", { plan_ref: blocked }));
    assert.equal((applied.data as Rec).reason, "blocked");
    assert.deepEqual(await state(blocked), ["deny", "blocked", false, false]);
  },
);

withAgents(
  "approval.list: newest first, at most 200, src cut to 65536 bytes at a character boundary (K-APPR-4)",
  { "agent:a": { ...AGENT, auto_apply: "never" } },
  async (k, { "agent:a": agent }) => {
    const refs: string[] = [];
    for (let i = 0; i < 200; i++) refs.push(await planOf(agent, `echo ${i}`));
    // "echo " is 5 bytes and "é" 2, so byte 65536 falls inside a character.
    const long = "echo " + "é".repeat(40000);
    refs.push(await planOf(agent, long));
    const human = await k.attach();
    const { requests } = await human.request("approval.list", {}) as { requests: Rec[] };
    assert.equal(requests.length, 200);
    assert.deepEqual(requests.map((r) => r.plan_ref), refs.slice(1).reverse());
    const newest = requests[0];
    assert.equal(newest.src, "echo " + "é".repeat(32765));
    assert.equal(new TextEncoder().encode(newest.src as string).length, 65535);
    assert.equal(newest.src_truncated, true);
    assert.equal(requests[1].src, "echo 199");
    assert.equal(requests[1].src_truncated, false);
    for (const field of ["requested_by", "requested_effects", "requested_ns"]) {
      assert.equal(newest[field], null, field);
    }
  },
);

Deno.test("P-PLAN-3 storing a 1001st plan of one (session, principal) evicts its oldest, and only its own", () => {
  const plans = new PlanStore();
  const store = (session: string, principal: string) =>
    plans.store({
      src: "true",
      session,
      principal,
      cwd: "/",
      effects: [],
      written: [],
      reversibility: "reversible",
      approval: "not_required",
    }).ref;
  const otherPrincipal = store("s", "agent:b");
  const otherSession = store("t", "agent:a");
  const mine = Array.from({ length: 1000 }, () => store("s", "agent:a"));
  assert.equal(plans.listFor("s", "agent:a").length, 1000);
  const newest = store("s", "agent:a");
  assert.throws(() => plans.lookup(mine[0]), (e) => e instanceof RpcError && e.code === -32012);
  assert.deepEqual(
    plans.listFor("s", "agent:a").map((p) => p.ref),
    [...mine.slice(1), newest],
  );
  assert.equal(plans.lookup(otherPrincipal).principal, "agent:b");
  assert.equal(plans.lookup(otherSession).session, "t");
});

withAgents(
  "brace expansion and dot-matching globs cannot smuggle a path past the policy: rm {../outside,x} or .?/outside inside a granted directory is denied and deletes nothing (K-EFF-3, P-EVAL-1, K-EXEC-2)",
  {
    "agent:d": {
      fs: { delete: ["~/work/**"] },
      proc_spawn: ["*"],
      session_write: true,
      auto_apply: "in-grant",
    },
  },
  async (k, { "agent:d": agent }) => {
    const home = `${k.box.dir}/home`;
    await Deno.mkdir(`${home}/work`);
    await Deno.writeTextFile(`${home}/work/x`, "x");
    await Deno.writeTextFile(`${home}/outside`, "keep me");
    for (
      const src of [
        "cd ~/work && rm {../outside,x}",
        "cd ~/work && shopt -u globskipdots && rm .?/outside",
      ]
    ) {
      const e = await rpcError(exec(agent, src));
      assert.equal(e.code, -32010, src);
      assert.equal((e.data as Rec).verdict, "deny", src);
    }
    assert.equal(await Deno.readTextFile(`${home}/outside`), "keep me");
    // The grant itself works.
    await exec(agent, "cd ~/work && rm x");
    assert.equal(existsSync(`${home}/work/x`), false);
  },
);

Deno.test({
  name:
    "K-APPR-4 an agent's plans cannot hide every pending approval from the human: after twelve plans with the widest effect report an agent may store, `shoal-kernel approvals` still lists the other agent's pending plan [ignored: defect found by the probe round; needs a SPEC decision: K-APPR-4 bounds each item (src 64 KiB, effects as K-EFF-7: ~1.8 MiB as JSON when the paths are control characters) and the list to 200 items, not the result, so a dozen such plans exceed the 16 MiB frame and approval.list answers -32603 'response too large' to every approver, listing nobody's plans; a byte budget for the list, or fewer items per principal, is the SPEC's choice]",
  ignore: true,
  fn: async () => {
    const k = await startKernelWithPolicy({
      "agent:a": tmpRunner("never"),
      "agent:b": tmpRunner("never"),
    });
    try {
      const a = await createToken(k.box, "agent:a");
      const b = await createToken(k.box, "agent:b");
      const honest = await k.attach("default", b.secret);
      const wanted = await exec(honest, "touch /tmp/wanted", { mode: "plan" });
      assert.equal(wanted.approval, "pending");
      const agent = await k.attach("default", a.secret);
      const src = widestSource("/tmp");
      for (let i = 0; i < 12; i++) await exec(agent, src, { mode: "plan" });
      const listed = await kernelCli(k.box, ["approvals", "--socket", k.socket]);
      assert.equal(listed.code, 0, listed.stderr);
      assert.ok(listed.stdout.includes(wanted.plan_ref as string));
    } finally {
      await k.cleanup();
    }
  },
});
