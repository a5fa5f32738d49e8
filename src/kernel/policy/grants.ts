import type { Effect, EffectKind, Reversibility } from "./effects.ts";
import {
  canSelfApprove,
  envReadGranted,
  opaqueVerdict,
  planVerdict,
  type Verdict,
  wantsBinHash,
} from "./evaluate.ts";
import { type Policy, policyFor, type PrincipalPolicy } from "./leash.ts";
import type { Sandboxing } from "../sandbox/command.ts";
import { isSandboxed, runSandbox, type SandboxSetting } from "../sandbox/principal_sandbox.ts";

export type { Verdict } from "./evaluate.ts";

/** What a principal's policy entry grants, resolved once (P-PRIN-1); the exec path asks it. */
export class Grants {
  constructor(
    readonly principal: string,
    readonly entry: PrincipalPolicy | null,
    readonly home: string | undefined,
    readonly sandbox: SandboxSetting,
    readonly localHuman: boolean,
  ) {}

  /** The verdict for a list of effects (P-EVAL-2). */
  verdict(effects: readonly Effect[], reversibility: Reversibility): Verdict {
    return planVerdict(this.entry, effects, reversibility, this.home);
  }

  /** Whether the `proc_spawn` grants name binary hashes (K-EFF-3). */
  get wantsBinHashes(): boolean {
    return wantsBinHash(this.entry);
  }

  /** Whether the principal sees every journal row and event (K-JQ-3, K-EVT-8). */
  get canReadJournal(): boolean {
    return this.entry?.journal_read === true;
  }

  /** Whether the principal may grant or deny other principals' plans (K-APPR-1). */
  get isApprover(): boolean {
    return this.entry?.approver ?? false;
  }

  /** Whether `self_approve` covers every kind (K-CAP-1 step 4). */
  canSelfApprove(kinds: readonly EffectKind[]): boolean {
    return canSelfApprove(this.entry, kinds);
  }

  /** Whether `env_read` covers every name (K-SESS-1). */
  envReadGranted(names: readonly string[]): boolean {
    return envReadGranted(this.entry, names);
  }

  /** Whether the principal's runs go inside the bubblewrap sandbox (P-SBX-2). */
  get sandboxed(): boolean {
    return isSandboxed(this.sandbox, this.entry, this.localHuman);
  }

  /**
   * The sandbox of one run in `cwd` (null: unconfined), seeing also the `approved` effects of the
   * plan it runs; throws -32010 when the run may not start (P-SBX-2, P-SBX-3).
   */
  sandboxFor(cwd: string, approved: readonly Effect[] = []): Sandboxing | null {
    return runSandbox(this.sandbox, this.entry, this.localHuman, this.principal, cwd, approved);
  }

  /** The `caps` member of an attach result (K-ATTACH-4). */
  caps(profile: string, tokenCaps: string[]) {
    const enforced = this.sandboxed;
    return {
      enforced,
      tier: enforced ? "B" : "D",
      available_tier: this.sandbox.host.tier,
      policy_principal: this.principal,
      profile,
      token_caps: tokenCaps,
      opaque: opaqueVerdict(this.entry),
      approver: this.isApprover,
      journal_read: this.canReadJournal,
    };
  }
}

/**
 * The facts grants are resolved from: the policy, the local human, HOME for `~/` globs and the
 * host's sandbox.
 */
export interface GrantSource {
  policy: Policy;
  localHuman: string;
  home: string | undefined;
  sandbox: SandboxSetting;
}

/** Resolves a principal's grants from its policy entry; unknown principals get none (P-PRIN-1). */
export function resolveGrants(source: GrantSource, principal: string): Grants {
  return new Grants(
    principal,
    policyFor(source.policy, principal, source.localHuman),
    source.home,
    source.sandbox,
    principal === source.localHuman,
  );
}
