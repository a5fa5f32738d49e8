import { z } from "zod";
import { ErrorCode, RpcError } from "../../../protocol/errors.ts";
import type { Attachment } from "../../session/attachment.ts";
import { runSource } from "../../exec/run_source.ts";
import type { RunServices } from "../../exec/run_services.ts";
import type { PlanServices } from "../../plans/plan_services.ts";
import type { KernelServices } from "../kernel_services.ts";
import { attached, type MethodSpec } from "../method.ts";
import {
  analyze,
  enforceVerdict,
  planUri,
  refuseUnknownPrincipal,
  shownPlanEffects,
  storePlan,
} from "../../plans/analysis.ts";
import type { Plan } from "../../plans/store.ts";
import { applyPlan, checkApplicable } from "../../plans/apply.ts";
import { runOptions, runParams } from "../../exec/run_params.ts";
import { reportEffects } from "../../policy/effect_report.ts";
import { refuseRemovedCwd } from "../../session/removed_cwd.ts";

const execParams = runParams.extend({
  src: z.string(),
  mode: z.enum(["run", "plan", "approved"]).nullish().transform((v) => v ?? "run"),
  plan_ref: z.string().nullish(),
});

/** Why `plan.apply` refused a plan, for the -32010 of an approved-mode exec. */
const REFUSALS: ReadonlyMap<number, string> = new Map([
  [ErrorCode.UNKNOWN_PLAN, "unknown_plan"],
  [ErrorCode.APPROVAL_REQUIRED, "not_approved"],
]);

/**
 * The plan an approved-mode exec may run: one `plan.apply` would accept for this caller, with
 * exactly this `src`. Every refusal is -32010 (K-EXEC-9).
 */
async function approvedPlan(
  kernel: PlanServices,
  attachment: Attachment,
  ref: string | null,
  src: string,
): Promise<Plan> {
  try {
    if (ref === null) {
      throw new RpcError(ErrorCode.LEASH_DENIED, "approved mode needs a plan_ref", {
        reason: "no_plan",
      });
    }
    const plan = kernel.plans.owned(ref, attachment.session.name, attachment.principal);
    if (plan.src !== src) {
      throw new RpcError(ErrorCode.LEASH_DENIED, "source differs from the approved plan", {
        reason: "src_mismatch",
        plan_ref: plan.ref,
      });
    }
    return await checkApplicable(kernel, attachment, plan.ref);
  } catch (e) {
    const reason = e instanceof RpcError ? REFUSALS.get(e.code) : undefined;
    if (reason === undefined) throw e;
    throw new RpcError(ErrorCode.LEASH_DENIED, (e as RpcError).message, {
      reason,
      plan_ref: ref,
    });
  }
}

/** `exec` (K-EXEC-1..9): run, plan, or the approved re-entry of `plan.apply`. */
export const EXEC_METHODS: MethodSpec[] = [
  // Taken before any await: execs of a session start in the order their requests were read,
  // however long each one's analysis takes (W-RPC-4).
  attached(
    "exec",
    execParams,
    ({ kernel, attachment }, p) =>
      attachment.session.inTurn((started) => {
        // the policy in force when its turn comes, not at dispatch: earlier execs of the session
        // may have kept it waiting while the file was narrowed (M-ONB-1)
        kernel.refreshGrants(attachment);
        return execute(kernel, attachment, p, started);
      }),
  ),
];

/** One `exec` once its start turn has come; `started` ends the turn when bash is spawned. */
async function execute(
  kernel: RunServices & PlanServices & Pick<KernelServices, "refreshGrants">,
  attachment: Attachment,
  p: z.output<typeof execParams>,
  started: () => void,
): Promise<unknown> {
  const opts = { ...runOptions(p), started };
  if (p.mode === "approved") {
    const plan = await approvedPlan(kernel, attachment, p.plan_ref ?? null, p.src);
    return applyPlan(kernel, attachment, plan, opts);
  }
  if (p.mode !== "plan") {
    refuseUnknownPrincipal(attachment.grants);
    refuseRemovedCwd(attachment);
  }
  const analysis = await analyze(attachment, p.src, false);
  const judgedBy = attachment.grants;
  if (kernel.refreshGrants(attachment) !== judgedBy) {
    // the policy changed while the source was analysed (off the event loop): judged again by it
    analysis.verdict = attachment.grants.verdict(analysis.effects, analysis.reversibility);
  }
  if (p.mode === "plan") {
    const plan = storePlan(kernel, attachment, p.src, analysis);
    return {
      plan_ref: plan.ref,
      uri: planUri(plan.ref),
      ...reportEffects(shownPlanEffects(plan, analysis.verdict, attachment.grants)),
      reversibility: plan.reversibility,
      verdict: analysis.verdict,
      approval_pending: plan.approval === "pending",
      approval: plan.approval,
    };
  }
  const sandbox = enforceVerdict(kernel, attachment, p.src, analysis);
  return runSource(kernel, attachment, p.src, analysis.effects, sandbox, {
    ...opts,
    plainSandbox: true,
  });
}
