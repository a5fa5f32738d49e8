import { z } from "zod";
import { APPROVAL_LIST_LIMIT, APPROVAL_SRC_LIMIT } from "../../../protocol/limits.ts";
import type { KernelServices } from "../kernel_services.ts";
import type { PlanServices } from "../../plans/plan_services.ts";
import { nowNs } from "../../events/now_ns.ts";
import { attached, type MethodSpec } from "../method.ts";
import { pathObject } from "../../values/path_object.ts";
import { cwdBytesOf } from "../../bash/shell_state.ts";
import { planRecord, planSummary, publishApproval } from "../../plans/analysis.ts";
import type { Plan } from "../../plans/store.ts";
import type { Attachment } from "../../session/attachment.ts";
import { type EffectKind, normalizeEffectName } from "../../policy/effects.ts";
import { runOptions, runParams } from "../../exec/run_params.ts";
import { type Grants, resolveGrants } from "../../policy/grants.ts";
import { applyPlan, checkApplicable } from "../../plans/apply.ts";
import { denied, refuseDenied } from "../../plans/denied.ts";
import { utf8Prefix } from "../../../protocol/utf8.ts";
import { reportedMember, reportEffects } from "../../policy/effect_report.ts";

const planRef = z.object({ plan_ref: z.string() });
const effectNames = z.array(z.union([z.string(), z.object({ kind: z.string() })])).nullish();

/** The first {@link APPROVAL_SRC_LIMIT} bytes of `src`, cut back to a character boundary (K-APPR-4). */
function srcHead(src: string): { src: string; src_truncated: boolean } {
  const head = utf8Prefix(src, APPROVAL_SRC_LIMIT);
  return { src: head, src_truncated: head.length < src.length };
}

/** The distinct effect kinds of a plan. */
function planKinds(plan: Plan): EffectKind[] {
  return [...new Set(plan.effects.map((e) => e.kind))];
}

/** Normalized kinds named by the caller (K-EFF-2); unknown → -32602. */
function namedKinds(effects: z.infer<typeof effectNames>): EffectKind[] {
  return [
    ...new Set((effects ?? []).map((e) => normalizeEffectName(typeof e === "string" ? e : e.kind))),
  ];
}

/** The plan kinds a non-empty list leaves out (K-CAP-1 step 3). */
function uncovered(plan: Plan, named: EffectKind[]): EffectKind[] {
  return named.length === 0 ? [] : planKinds(plan).filter((k) => !named.includes(k));
}

/** Approves a plan and announces it (K-CAP-1 step 4, K-APPR-2). */
function approve(kernel: PlanServices, plan: Plan, by: string): void {
  plan.approval = "approved";
  plan.approvedBy = by;
  publishApproval(kernel, plan, "granted", by);
}

/** The answer when a non-empty effect list leaves plan kinds out (K-CAP-1 step 3). */
function uncoveredResult(plan: Plan, missing: EffectKind[]) {
  return {
    grant: "approval_pending",
    plan_ref: plan.ref,
    why: "uncovered_effects",
    uncovered_effects: missing,
  };
}

/** The answer for an approved plan (K-CAP-1 step 2, K-APPR-2). */
function approvedResult(kernel: Pick<KernelServices, "config">, plan: Plan, by: string) {
  return {
    grant: "approved",
    plan_ref: plan.ref,
    approved_by: by,
    enforced: resolveGrants(kernel.config, plan.principal).sandboxed,
  };
}

/** Fails unless the caller is an approver (K-APPR-1). */
function requireApprover(grants: Grants): void {
  if (!grants.isApprover) {
    throw denied("not_approver", `${grants.principal} is not an approver`);
  }
}

/** The current verdict of a plan, judged by its owner's grants. */
function ownerVerdict(kernel: Pick<KernelServices, "config">, plan: Plan) {
  return resolveGrants(kernel.config, plan.principal).verdict(plan.effects, plan.reversibility);
}

const applyParams = runParams.merge(planRef);

/** `plan.approve`/`plan.deny` params: only the client path exists (M-ELICIT-1). */
const viaClient = planRef.extend({ via: z.literal("client"), reason: z.string().nullish() });

/**
 * The caller's own pending plan that its MCP client may decide (M-ELICIT-1): a token
 * attachment whose principal approves in client and is sandboxed, a plan of that principal and
 * session awaiting a decision; anything else → -32010 `not_approver` (unknown plan → -32012).
 */
function clientDecidable(kernel: PlanServices, attachment: Attachment, ref: string): Plan {
  if (attachment.token === null || !attachment.grants.approvesInClient) {
    throw denied(
      "not_approver",
      `${attachment.principal} may not approve in its client (needs a token, approve_in_client and the sandbox)`,
    );
  }
  const plan = kernel.plans.lookup(ref);
  if (plan.session !== attachment.session.name || plan.principal !== attachment.principal) {
    throw denied("not_approver", `plan ${plan.ref} belongs to another principal or session`, {
      plan_ref: plan.ref,
    });
  }
  if (plan.approval !== "pending" && plan.approval !== "requested") {
    throw denied("not_approver", `plan ${plan.ref} is not pending (${plan.approval})`, {
      plan_ref: plan.ref,
      approval: plan.approval,
    });
  }
  return plan;
}

/** `plan.*`, `cap.request` and `approval.*` (K-PLAN-*, K-CAP-1, K-APPR-*, M-ELICIT-1). */
export const PLAN_METHODS: MethodSpec[] = [
  attached("plan.get", planRef, async ({ kernel, attachment }, p) => {
    const plan = kernel.plans.owned(p.plan_ref, attachment.session.name, attachment.principal);
    return await planRecord(plan, attachment.grants);
  }),
  attached(
    "plan.list",
    z.object({}),
    ({ kernel, attachment }) =>
      kernel.plans.listFor(attachment.session.name, attachment.principal)
        .map((plan) => planSummary(plan, attachment.grants)),
  ),
  // A run like an exec's, so it starts in the order of the session's execs (W-RPC-4).
  attached(
    "plan.apply",
    applyParams,
    ({ kernel, attachment }, p) =>
      attachment.session.inTurn(async (started) => {
        kernel.refreshGrants(attachment); // the policy in force when its turn comes (M-ONB-1)
        const plan = await checkApplicable(kernel, attachment, p.plan_ref);
        return await applyPlan(kernel, attachment, plan, { ...runOptions(p), started });
      }),
  ),
  attached(
    "cap.request",
    planRef.extend({ effects: effectNames }),
    ({ kernel, attachment }, p) => {
      const named = namedKinds(p.effects);
      const plan = kernel.plans.owned(p.plan_ref, attachment.session.name, attachment.principal);
      const verdict = attachment.grants.verdict(plan.effects, plan.reversibility);
      refuseDenied(plan, verdict);
      if (verdict === "allow" || plan.approval === "approved") {
        return {
          ...approvedResult(kernel, plan, plan.approvedBy ?? "policy"),
          granted_effects: named,
        };
      }
      const missing = uncovered(plan, named);
      if (missing.length > 0) return uncoveredResult(plan, missing);
      if (attachment.grants.canSelfApprove(planKinds(plan))) {
        approve(kernel, plan, attachment.principal);
        return { ...approvedResult(kernel, plan, attachment.principal), granted_effects: named };
      }
      if (plan.approval !== "requested") {
        plan.approval = "requested";
        plan.requestedBy = attachment.principal;
        plan.requestedEffects = named.length ? named : planKinds(plan);
        plan.requestedNs = nowNs();
        publishApproval(kernel, plan, "requested", attachment.principal);
      }
      return {
        grant: "approval_pending",
        plan_ref: plan.ref,
        why: "awaiting_approver",
        requested_effects: plan.requestedEffects,
        requested_by: plan.requestedBy,
        requested_ns: plan.requestedNs,
      };
    },
  ),
  attached(
    "approval.grant",
    planRef.extend({ effects: effectNames }),
    ({ kernel, attachment }, p) => {
      const named = namedKinds(p.effects);
      requireApprover(attachment.grants);
      const plan = kernel.plans.lookup(p.plan_ref);
      if (plan.approval === "blocked" || ownerVerdict(kernel, plan) === "deny") {
        throw denied("blocked", `plan ${plan.ref} is denied by policy`, { plan_ref: plan.ref });
      }
      const missing = uncovered(plan, named);
      if (missing.length > 0) return uncoveredResult(plan, missing);
      approve(kernel, plan, attachment.principal);
      return approvedResult(kernel, plan, attachment.principal);
    },
  ),
  attached(
    "approval.deny",
    planRef.extend({ reason: z.string().nullish() }),
    ({ kernel, attachment }, p) => {
      requireApprover(attachment.grants);
      const plan = kernel.plans.lookup(p.plan_ref);
      if (plan.approval === "blocked") {
        throw denied("blocked", `plan ${plan.ref} is denied by policy`, { plan_ref: plan.ref });
      }
      plan.approval = "denied";
      plan.approvedBy = null;
      const reason = p.reason ?? null;
      publishApproval(kernel, plan, "denied", attachment.principal, reason);
      return { grant: "denied", plan_ref: plan.ref, denied_by: attachment.principal, reason };
    },
  ),
  attached("plan.approve", viaClient, ({ kernel, attachment }, p) => {
    const plan = clientDecidable(kernel, attachment, p.plan_ref);
    // K-APPR-2's rule stays (M-ELICIT-1): a plan the policy now denies is never approved
    if (ownerVerdict(kernel, plan) === "deny") {
      throw denied("blocked", `plan ${plan.ref} is denied by policy`, { plan_ref: plan.ref });
    }
    const by = `${attachment.principal} via client`;
    approve(kernel, plan, by);
    return approvedResult(kernel, plan, by);
  }),
  attached("plan.deny", viaClient, ({ kernel, attachment }, p) => {
    const plan = clientDecidable(kernel, attachment, p.plan_ref);
    const by = `${attachment.principal} via client`;
    plan.approval = "denied";
    plan.approvedBy = null;
    const reason = p.reason ?? null;
    publishApproval(kernel, plan, "denied", by, reason);
    return { grant: "denied", plan_ref: plan.ref, denied_by: by, reason };
  }),
  attached("approval.list", z.object({}), ({ kernel, attachment }) => {
    const approver = attachment.grants.isApprover;
    const requests = kernel.plans.awaiting(attachment.principal, approver)
      .slice(0, APPROVAL_LIST_LIMIT)
      .map((plan) => {
        const owner = resolveGrants(kernel.config, plan.principal);
        return {
          plan_ref: plan.ref,
          session: plan.session,
          principal: plan.principal,
          ...srcHead(plan.src),
          cwd: pathObject(cwdBytesOf(plan)),
          ...reportEffects(plan.effects),
          reversibility: plan.reversibility,
          verdict: owner.verdict(plan.effects, plan.reversibility),
          ...reportedMember(
            "needs_approval",
            owner.approvalReasons(plan.effects, plan.reversibility),
          ),
          approval: plan.approval,
          requested_by: plan.requestedBy,
          requested_effects: plan.requestedEffects,
          requested_ns: plan.requestedNs,
        };
      });
    return { requests };
  }),
];
