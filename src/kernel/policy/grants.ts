import type { Effect, EffectKind, Reversibility } from "./effects.ts";
import {
  approvalReasons,
  canSelfApprove,
  effectVerdict,
  envReadGranted,
  missingGrants,
  opaqueVerdict,
  planVerdict,
  type Verdict,
  wantsBinHash,
} from "./evaluate.ts";
import { type Policy, policyFor, type PrincipalPolicy } from "./leash.ts";
import type { Sandboxing } from "../sandbox/command.ts";
import { withWorktreeGrants, worktreeKey } from "./worktree_grants.ts";
import { isSandboxed, runSandbox, type SandboxSetting, sandboxShows } from "./principal_sandbox.ts";

export type { Verdict } from "./evaluate.ts";

/**
 * What a principal's policy entry grants, resolved from one `policy` (P-PRIN-1); the exec path
 * asks it.
 */
export class Grants {
  constructor(
    readonly principal: string,
    readonly entry: PrincipalPolicy | null,
    readonly home: string | undefined,
    readonly sandbox: SandboxSetting,
    readonly localHuman: boolean,
    readonly policy: Policy,
    /** The linked worktrees its entry was resolved with ({@link worktreeKey}). */
    readonly worktrees = "",
  ) {}

  /** The verdict for a list of effects (P-EVAL-2). */
  verdict(effects: readonly Effect[], reversibility: Reversibility): Verdict {
    return planVerdict(this.entry, effects, reversibility, this.home);
  }

  /** Why `effects` need approval, one line per cause; empty when they do not (M-ELICIT-2). */
  approvalReasons(effects: readonly Effect[], reversibility: Reversibility): string[] {
    return approvalReasons(this.entry, effects, reversibility, this.home);
  }

  /** The policy lines that would grant the denied ones of `effects` (M-ONB-3). */
  missing(effects: readonly Effect[]): string[] {
    return this.entry === null ? [] : missingGrants(this.entry, effects, this.home);
  }

  /** Whether the principal may read `path` (a physical path) without asking. */
  mayRead(path: string): boolean {
    return this.entry !== null &&
      effectVerdict(this.entry, { kind: "fs_read", paths: [path] }, this.home) === "allow";
  }

  /**
   * Whether the principal may list the directory `dir` (a physical path): it may read it, and
   * when its runs are sandboxed their sandbox shows it, so nothing masked (the kernel's state,
   * with the CAS names of everyone's outputs) is listed (K-COMP-1, P-SBX-3).
   */
  mayList(dir: string): boolean {
    return this.mayRead(dir) && (!this.sandboxed || sandboxShows(this.sandbox, this.entry!, dir));
  }

  /** Whether the `proc_spawn` grants name binary hashes (K-EFF-3). */
  get wantsBinHashes(): boolean {
    return wantsBinHash(this.entry);
  }

  /** Whether the principal sees every journal row and event (K-JQ-3, K-EVT-8). */
  get canReadJournal(): boolean {
    return this.entry?.journal_read === true;
  }

  /** Whether the principal may change the session's shell state, e.g. its cwd (`session_write`). */
  get canWriteSession(): boolean {
    return this.entry?.session_write === true;
  }

  /** Whether the principal may grant or deny other principals' plans (K-APPR-1). */
  get isApprover(): boolean {
    return this.entry?.approver ?? false;
  }

  /**
   * Whether the principal's MCP client may approve or deny its pending plans: the policy says
   * `approve_in_client` and its runs are sandboxed, so only its facade holds the token (M-ELICIT-1).
   */
  get approvesInClient(): boolean {
    return this.entry?.approve_in_client === true && this.sandboxed;
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

  /**
   * The `caps` member of an attach result (K-ATTACH-4); `approve_in_client` tells a facade
   * attached with the principal's token that it may ask the human itself (M-ELICIT-1/2).
   */
  caps(profile: string, tokenCaps: string[], withToken: boolean) {
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
      approve_in_client: withToken && this.approvesInClient,
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
  return grantsUnder(source.policy, source, principal);
}

function grantsUnder(policy: Policy, source: GrantSource, principal: string): Grants {
  const entry = policyFor(policy, principal, source.localHuman);
  return new Grants(
    principal,
    // a project that is a linked worktree: its git directories (M-ONB-3)
    withWorktreeGrants(entry, source.home),
    source.home,
    source.sandbox,
    principal === source.localHuman,
    policy,
    worktreeKey(entry, source.home),
  );
}

/**
 * `grants` under the policy in force now: the same object while the policy is the one they were
 * resolved from and its projects are the linked worktrees they were, else resolved again (from
 * the re-read file, M-ONB-1, which may have narrowed or removed the principal).
 */
export function currentGrants(source: GrantSource, grants: Grants): Grants {
  const policy = source.policy;
  if (policy !== grants.policy) return grantsUnder(policy, source, grants.principal);
  // a project made a linked worktree since (or no longer one): its git directories now
  const entry = policyFor(policy, grants.principal, source.localHuman);
  return worktreeKey(entry, source.home) === grants.worktrees
    ? grants
    : grantsUnder(policy, source, grants.principal);
}
