import { z } from "zod";
import { ErrorCode, RpcError } from "../../protocol/errors.ts";
import { APPROVAL_LIST_LIMIT, APPROVAL_SRC_LIMIT } from "../../protocol/limits.ts";
import type { Attachment } from "../attachment.ts";
import { parseBash } from "../bash/ast.ts";
import { type RunOptions, runSource } from "../exec.ts";
import type { Kernel } from "../kernel.ts";
import { nowNs } from "../events/now_ns.ts";
import { attached, type MethodSpec } from "../method.ts";
import { pathObject } from "../path_object.ts";
import { currentEffects, planRecord, planSummary, publishApproval } from "../planning.ts";
import type { Plan } from "../plans.ts";
import { type EffectKind, normalizeEffectName } from "../policy/effects.ts";
import { elideParams } from "../values/params.ts";
import {
  canSelfApprove,
  isApprover,
  isSandboxedPrincipal,
  principalVerdict,
  sandboxForRun,
} from "../verdicts.ts";

const planRef = z.object({ plan_ref: z.string() });
const effectNames = z.array(z.union([z.string(), z.object({ kind: z.string() })])).nullish();
const encoder = new TextEncoder();

/** The first {@link APPROVAL_SRC_LIMIT} bytes of `src`, cut back to a character boundary (K-APPR-4). */
function srcHead(src: string): { src: string; src_truncated: boolean } {
  const bytes = encoder.encode(src);
  if (bytes.length <= APPROVAL_SRC_LIMIT) return { src, src_truncated: false };
  let end = APPROVAL_SRC_LIMIT;
  while ((bytes[end] & 0xc0) === 0x80) end--;
  return { src: new TextDecoder().decode(bytes.subarray(0, end)), src_truncated: true };
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

/** The current verdict of a plan for its owner. */
function verdictOf(kernel: Kernel, plan: Plan) {
  return principalVerdict(kernel, plan.principal, plan.effects, plan.reversibility);
}

function denied(reason: string, message: string, extra: Record<string, unknown> = {}): RpcError {
  return new RpcError(ErrorCode.LEASH_DENIED, message, { reason, ...extra });
}

/** The plan a caller may apply now, or the K-PLAN-3 error in its order. */
export async function checkApplicable(
  kernel: Kernel,
  attachment: Attachment,
  ref: string,
): Promise<Plan> {
  const plan = kernel.plans.owned(ref, attachment.session.name, attachment.principal);
  if (plan.approval === "denied" || plan.approval === "blocked") {
    throw denied(plan.approval, `plan ${plan.ref} is ${plan.approval}`, { plan_ref: plan.ref });
  }
  if (plan.approval !== "approved" && verdictOf(kernel, plan) !== "allow") {
    throw new RpcError(ErrorCode.APPROVAL_REQUIRED, `plan ${plan.ref} is not approved`, {
      verdict: verdictOf(kernel, plan),
      plan_ref: plan.ref,
    });
  }
  const now = await currentEffects(kernel, attachment, parseBash(plan.src));
  if (JSON.stringify(now.effects) !== JSON.stringify(plan.effects)) {
    throw denied("stale_plan", "the plan's effects changed since it was made", {
      effects: now.effects,
      plan_ref: plan.ref,
    });
  }
  return plan;
}

/**
 * Runs a plan's stored source exactly like an exec `run` (K-PLAN-3); sandboxed, the run also
 * sees what an approval granted (P-SBX-3).
 */
export function applyPlan(
  kernel: Kernel,
  attachment: Attachment,
  plan: Plan,
  opts: RunOptions,
): Promise<unknown> {
  const approved = plan.approval === "approved" ? plan.effects : [];
  const cwd = attachment.session.state.cwd;
  const sandbox = sandboxForRun(kernel, attachment.principal, cwd, approved);
  return runSource(kernel, attachment, plan.src, plan.effects, sandbox, opts);
}

/** Approves a plan and announces it (K-CAP-1 step 4, K-APPR-2). */
function approve(kernel: Kernel, plan: Plan, by: string): void {
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
function approvedResult(kernel: Kernel, plan: Plan, by: string) {
  return {
    grant: "approved",
    plan_ref: plan.ref,
    approved_by: by,
    enforced: isSandboxedPrincipal(kernel, plan.principal),
  };
}

/** Fails unless the caller is an approver (K-APPR-1). */
function requireApprover(kernel: Kernel, principal: string): void {
  if (!isApprover(kernel, principal)) {
    throw denied("not_approver", `${principal} is not an approver`);
  }
}

const applyParams = planRef.extend({
  position: z.enum(["stmt", "value"]).nullish().transform((v) => v ?? "stmt"),
  async: z.boolean().nullish(),
  background: z.boolean().nullish(),
  timeout_ms: z.number().int().min(1).max(2147483647).nullish(),
  elide: elideParams.nullish(),
});

/** `plan.*`, `cap.request` and `approval.*` (K-PLAN-*, K-CAP-1, K-APPR-*). */
export const PLAN_METHODS: MethodSpec[] = [
  attached("plan.get", planRef, ({ kernel, attachment }, p) => {
    const plan = kernel.plans.owned(p.plan_ref, attachment.session.name, attachment.principal);
    return planRecord(kernel, plan);
  }),
  attached(
    "plan.list",
    z.object({}),
    ({ kernel, attachment }) =>
      kernel.plans.listFor(attachment.session.name, attachment.principal)
        .map((plan) => planSummary(kernel, plan)),
  ),
  attached("plan.apply", applyParams, async ({ kernel, attachment }, p) => {
    const plan = await checkApplicable(kernel, attachment, p.plan_ref);
    return applyPlan(kernel, attachment, plan, {
      position: p.position,
      async: p.async === true || p.background === true,
      timeoutMs: p.timeout_ms ?? null,
      elide: p.elide,
    });
  }),
  attached(
    "cap.request",
    planRef.extend({ effects: effectNames }),
    ({ kernel, attachment }, p) => {
      const named = namedKinds(p.effects);
      const plan = kernel.plans.owned(p.plan_ref, attachment.session.name, attachment.principal);
      if (plan.approval === "blocked" || plan.approval === "denied") {
        throw denied(plan.approval, `plan ${plan.ref} is ${plan.approval}`, { plan_ref: plan.ref });
      }
      if (verdictOf(kernel, plan) === "allow" || plan.approval === "approved") {
        return {
          ...approvedResult(kernel, plan, plan.approvedBy ?? "policy"),
          granted_effects: named,
        };
      }
      const missing = uncovered(plan, named);
      if (missing.length > 0) return uncoveredResult(plan, missing);
      if (canSelfApprove(kernel, attachment.principal, planKinds(plan))) {
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
      requireApprover(kernel, attachment.principal);
      const plan = kernel.plans.lookup(p.plan_ref);
      if (plan.approval === "blocked" || verdictOf(kernel, plan) === "deny") {
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
      requireApprover(kernel, attachment.principal);
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
  attached("approval.list", z.object({}), ({ kernel, attachment }) => {
    const approver = isApprover(kernel, attachment.principal);
    const requests = kernel.plans.awaiting(attachment.principal, approver)
      .slice(0, APPROVAL_LIST_LIMIT)
      .map((plan) => ({
        plan_ref: plan.ref,
        session: plan.session,
        principal: plan.principal,
        ...srcHead(plan.src),
        cwd: pathObject(plan.cwd),
        effects: plan.effects,
        reversibility: plan.reversibility,
        verdict: verdictOf(kernel, plan),
        approval: plan.approval,
        requested_by: plan.requestedBy,
        requested_effects: plan.requestedEffects,
        requested_ns: plan.requestedNs,
      }));
    return { requests };
  }),
];
