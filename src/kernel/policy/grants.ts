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

export type { Verdict } from "./evaluate.ts";

/** Whether execs run inside an enforcing sandbox: the optional bubblewrap tier (P-SBX-1) is not built. */
export const SANDBOX_ENFORCED = false;

/** What a principal's policy entry grants, resolved once (P-PRIN-1); the exec path asks it. */
export class Grants {
  constructor(
    readonly principal: string,
    readonly entry: PrincipalPolicy | null,
    readonly home: string | undefined,
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

  /** Whether the policy demands a sandbox for the principal's execs (P-SBX-1). */
  get hermetic(): boolean {
    return this.entry?.hermetic === true;
  }

  /** The `caps` member of an attach result (K-ATTACH-4). */
  caps(profile: string, tokenCaps: string[]) {
    return {
      enforced: SANDBOX_ENFORCED,
      tier: "D",
      available_tier: "D",
      policy_principal: this.principal,
      profile,
      token_caps: tokenCaps,
      opaque: opaqueVerdict(this.entry),
      approver: this.isApprover,
      journal_read: this.canReadJournal,
    };
  }
}

/** The facts grants are resolved from: the policy, the local human and HOME for `~/` globs. */
export interface GrantSource {
  policy: Policy;
  localHuman: string;
  home: string | undefined;
}

/** Resolves a principal's grants from its policy entry; unknown principals get none (P-PRIN-1). */
export function resolveGrants(source: GrantSource, principal: string): Grants {
  return new Grants(principal, policyFor(source.policy, principal, source.localHuman), source.home);
}
