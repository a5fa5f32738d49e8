import type { Kernel } from "./kernel.ts";
import type { Effect, EffectKind, Reversibility } from "./policy/effects.ts";
import {
  canSelfApprove as policyCanSelfApprove,
  envReadGranted as policyEnvRead,
  isApprover as policyIsApprover,
  opaqueVerdict,
  planVerdict,
  type Verdict,
  wantsBinHash,
} from "./policy/evaluate.ts";
import { policyFor, type PrincipalPolicy } from "./policy/leash.ts";
import type { Sandboxing } from "./sandbox/command.ts";
import { isSandboxed, runSandbox } from "./sandbox/principal_sandbox.ts";

export type { Verdict } from "./policy/evaluate.ts";

/** The policy entry that governs a principal, or null when it is unknown (P-PRIN-1). */
function entry(kernel: Kernel, principal: string): PrincipalPolicy | null {
  return policyFor(kernel.config.policy, principal, kernel.config.localHuman);
}

/** The caller's verdict for a list of effects (P-EVAL-2). */
export function principalVerdict(
  kernel: Kernel,
  principal: string,
  effects: readonly Effect[],
  reversibility: Reversibility,
): Verdict {
  return planVerdict(entry(kernel, principal), effects, reversibility, kernel.config.home);
}

/** Whether the principal's `proc_spawn` grants name binary hashes (K-EFF-3). */
export function wantsBinHashes(kernel: Kernel, principal: string): boolean {
  return wantsBinHash(entry(kernel, principal));
}

/** Whether the principal sees every journal row and event (K-JQ-3, K-EVT-8). */
export function canReadJournal(kernel: Kernel, principal: string): boolean {
  return entry(kernel, principal)?.journal_read === true;
}

/** Whether the principal may grant or deny other principals' plans (K-APPR-1). */
export function isApprover(kernel: Kernel, principal: string): boolean {
  return policyIsApprover(kernel.config.policy, principal, kernel.config.localHuman);
}

/** Whether the principal's `self_approve` covers every kind (K-CAP-1 step 4). */
export function canSelfApprove(kernel: Kernel, principal: string, kinds: EffectKind[]): boolean {
  return policyCanSelfApprove(entry(kernel, principal), kinds);
}

/** Whether `env_read` covers every name (K-SESS-1). */
export function envReadGranted(kernel: Kernel, principal: string, names: string[]): boolean {
  return policyEnvRead(entry(kernel, principal), names);
}

/** Whether the principal's runs go inside the bubblewrap sandbox (P-SBX-2). */
export function isSandboxedPrincipal(kernel: Kernel, principal: string): boolean {
  return isSandboxed(
    kernel.config.sandbox,
    entry(kernel, principal),
    principal === kernel.config.localHuman,
  );
}

/**
 * The sandbox of one run of `principal` in `cwd` (null: unconfined), seeing also the `approved`
 * effects of the plan it runs; throws -32010 when the run may not start (P-SBX-2, P-SBX-3).
 */
export function sandboxForRun(
  kernel: Kernel,
  principal: string,
  cwd: string,
  approved: readonly Effect[] = [],
): Sandboxing | null {
  return runSandbox(
    kernel.config.sandbox,
    entry(kernel, principal),
    principal === kernel.config.localHuman,
    cwd,
    approved,
  );
}

/** The `caps` member of an attach result (K-ATTACH-4). */
export function callerCaps(
  kernel: Kernel,
  principal: string,
  profile: string,
  tokenCaps: string[],
) {
  const enforced = isSandboxedPrincipal(kernel, principal);
  return {
    enforced,
    tier: enforced ? "B" : "D",
    available_tier: kernel.config.sandbox.host.tier,
    policy_principal: principal,
    profile,
    token_caps: tokenCaps,
    opaque: opaqueVerdict(entry(kernel, principal)),
    approver: isApprover(kernel, principal),
    journal_read: canReadJournal(kernel, principal),
  };
}
