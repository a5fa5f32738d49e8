import { ErrorCode, RpcError } from "../../protocol/errors.ts";
import type { Attachment } from "../session/attachment.ts";
import { type RunOptions, runSource } from "../exec/run_source.ts";
import { sameCwd, type ShellState, spawnDir } from "../bash/shell_state.ts";
import { dirIdentity } from "../bash/dir_identity.ts";
import type { RunServices } from "../exec/run_services.ts";
import { currentEffects, refuseUnknownPrincipal } from "./analysis.ts";
import { denied, refuseDenied } from "./denied.ts";
import type { PlanServices } from "./plan_services.ts";
import type { Plan } from "./store.ts";
import { reportEffects } from "../policy/effect_report.ts";
import { callerEffects } from "./shown_paths.ts";

/**
 * The K-PLAN-3 refusals that depend on the plan's decision and the policy now, in their order. A
 * caller the policy no longer names (the human removed it after approving) is refused as its exec
 * would be (P-PRIN-1): its run would not go into the sandbox, which only a policy entry asks for
 * (P-SBX-2). A plan the policy now denies is blocked however it was approved ({@link refuseDenied}).
 */
function decidedPlan(kernel: PlanServices, attachment: Attachment, ref: string): Plan {
  const plan = kernel.plans.owned(ref, attachment.session.name, attachment.principal);
  refuseUnknownPrincipal(attachment.grants);
  const verdict = attachment.grants.verdict(plan.effects, plan.reversibility);
  refuseDenied(plan, verdict);
  if (plan.approval !== "approved" && verdict !== "allow") {
    throw new RpcError(ErrorCode.APPROVAL_REQUIRED, `plan ${plan.ref} is not approved`, {
      verdict,
      plan_ref: plan.ref,
    });
  }
  return plan;
}

/**
 * Whether a session state's cwd is the plan's: the same path, naming the same directory (a
 * directory swapped for a symlink to another keeps the path, P-PLAN-2).
 */
function inPlanCwd(state: ShellState, plan: Plan): boolean {
  if (!sameCwd(state, plan)) return false;
  if (plan.cwdIdentity === undefined) return true;
  if (state.cwdIdentity !== undefined && state.cwdIdentity !== plan.cwdIdentity) return false;
  return dirIdentity(state.cwd) === plan.cwdIdentity;
}

/**
 * The plan a caller may apply now, or the K-PLAN-3 error in its order. Its decision is judged
 * again once its effects are derived (off the event loop for a long source), so a deny answered
 * meanwhile stops the run; the caller starts the run in the same turn. The session must still be
 * in the cwd the plan was made and shown in (P-PLAN-2): an opaque command's effects do not name
 * the cwd, so `bash script.sh` approved in one directory would run another's script.sh.
 */
export async function checkApplicable(
  kernel: PlanServices,
  attachment: Attachment,
  ref: string,
): Promise<Plan> {
  const plan = decidedPlan(kernel, attachment, ref);
  const now = await currentEffects(attachment, plan.src, false);
  decidedPlan(kernel, attachment, ref);
  const moved = !inPlanCwd(attachment.session.shell.view(attachment.principal), plan);
  if (moved || JSON.stringify(now.effects) !== JSON.stringify(plan.effects)) {
    const what = moved ? "the session's cwd" : "the plan's effects";
    throw denied("stale_plan", `${what} changed since the plan was made`, {
      ...reportEffects(callerEffects(now, attachment.grants)),
      plan_ref: plan.ref,
    });
  }
  return plan;
}

/**
 * Runs a plan's stored source exactly like an exec `run` (K-PLAN-3), in exactly the directory
 * it was made in; sandboxed, the run also sees what an approval granted (P-SBX-3). A run that
 * may not start is refused (-32010).
 */
export function applyPlan(
  kernel: RunServices,
  attachment: Attachment,
  plan: Plan,
  opts: RunOptions,
): Promise<unknown> {
  const approved = plan.approval === "approved" ? plan.effects : [];
  const state = attachment.session.shell.view(attachment.principal);
  const sandbox = attachment.grants.sandboxFor(spawnDir(state), approved);
  const approvedBy = plan.approval === "approved" ? plan.approvedBy : null;
  return runSource(kernel, attachment, plan.src, plan.effects, sandbox, {
    ...opts,
    approvedBy,
    cwdIdentity: plan.cwdIdentity,
  });
}
