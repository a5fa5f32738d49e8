import { ErrorCode, RpcError } from "../../protocol/errors.ts";
import type { Verdict } from "../policy/evaluate.ts";
import type { Plan } from "./store.ts";

/** A -32010 refusal with its `reason` (K-PLAN-3, K-APPR-1). */
export function denied(
  reason: string,
  message: string,
  extra: Record<string, unknown> = {},
): RpcError {
  return new RpcError(ErrorCode.LEASH_DENIED, message, { reason, ...extra });
}

/**
 * Refuses (-32010 `denied` or `blocked`) a plan the human denied, or whose effects the policy
 * denies now (`verdict`) however it was approved (K-PLAN-1, K-PLAN-3, K-CAP-1): an approval lifts
 * `approval_required`, never a deny, as `approval.grant` refuses one (K-APPR-2).
 */
export function refuseDenied(plan: Plan, verdict: Verdict): void {
  if (plan.approval === "denied" || plan.approval === "blocked" || verdict === "deny") {
    const reason = plan.approval === "denied" ? "denied" : "blocked";
    throw denied(reason, `plan ${plan.ref} is ${reason}`, { plan_ref: plan.ref });
  }
}
