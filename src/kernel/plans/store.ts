import { ErrorCode, RpcError } from "../../protocol/errors.ts";
import { MAX_PLAN_SOURCE_BYTES, MAX_PLANS } from "../../protocol/limits.ts";
import { nowNs } from "../events/now_ns.ts";
import type { Effect, Reversibility } from "../policy/effects.ts";
import { utf8Length } from "../../protocol/utf8.ts";

/** Approval states of a plan (K-PLAN-1, P-PLAN-4). */
export type ApprovalState =
  | "not_required"
  | "pending"
  | "requested"
  | "approved"
  | "denied"
  | "blocked";

/** A stored plan: exact source bound to its session and principal (P-PLAN-2). */
export interface Plan {
  ref: string;
  src: string;
  session: string;
  principal: string;
  /** The cwd at planning time; its lossy display text when {@link cwdBytes} is set. */
  cwd: string;
  /** The cwd's exact bytes when they are not UTF-8 (as `ShellState.cwdBytes`). */
  cwdBytes?: Uint8Array;
  /**
   * The `device:inode` of the directory the cwd named at planning, when it could be told (a
   * UTF-8 cwd that existed): a run of the plan enters exactly that one (`ShellState.cwdIdentity`).
   */
  cwdIdentity?: string;
  effects: Effect[];
  /**
   * The paths of `effects` a symlink led to, each with the form the source wrote
   * (`EffectAnalysis.written`), so the plan is shown to its owner as a refusal would be.
   */
  written: [string, string][];
  reversibility: Reversibility;
  createdNs: bigint;
  approval: ApprovalState;
  approvedBy: string | null;
  requestedBy: string | null;
  requestedEffects: string[] | null;
  requestedNs: bigint | null;
}

/** A new plan ref: `plan:` + 128 random bits as 32 lowercase hex (P-PLAN-1). */
function newRef(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  return "plan:" + Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}

/** Accepts `plan:<hex>` or bare hex. */
function normalizeRef(ref: string): string {
  return ref.startsWith("plan:") ? ref : `plan:${ref}`;
}

/** UTF-8 bytes of the strings in `value` (a plan's effects or written paths), however nested. */
function stringBytes(value: unknown): number {
  if (typeof value === "string") return utf8Length(value);
  if (typeof value !== "object" || value === null) return 0;
  let n = 0;
  for (const v of Object.values(value)) n += stringBytes(v);
  return n;
}

/**
 * UTF-8 bytes a plan holds: its source, and the paths and names of its effects. Effects are
 * counted too, as they can be far larger than the source: `cd DIR && cat a0 a1 …` names each
 * file by its absolute path, so 130 KB of source in a 3,000-byte deep cwd held 60 MB of paths,
 * and the 64 MiB of source allowed gigabytes (found by probe13: the kernel grew ~60 MB per plan).
 */
function heldBytes(plan: Plan): number {
  return utf8Length(plan.src) + stringBytes(plan.effects) + stringBytes(plan.written);
}

/** The kernel's plans, in memory only (P-PLAN-3), never overwritten. */
export class PlanStore {
  #plans = new Map<string, Plan>();
  /** UTF-8 bytes each stored plan holds (source and effects), by ref (E-3). */
  #heldBytes = new Map<string, number>();

  /**
   * Stores a plan under a fresh random ref, evicting the owner's oldest (same session and
   * principal) beyond 1000 plans or beyond 64 MiB of source and effects in total (P-PLAN-3, E-3).
   */
  store(
    fields: Omit<
      Plan,
      "ref" | "createdNs" | "approvedBy" | "requestedBy" | "requestedEffects" | "requestedNs"
    >,
  ): Plan {
    let ref = newRef();
    while (this.#plans.has(ref)) ref = newRef();
    const plan: Plan = {
      ...fields,
      ref,
      createdNs: nowNs(),
      approvedBy: null,
      requestedBy: null,
      requestedEffects: null,
      requestedNs: null,
    };
    this.#plans.set(ref, plan);
    this.#heldBytes.set(ref, heldBytes(plan));
    const mine = this.listFor(plan.session, plan.principal);
    let total = mine.reduce((sum, p) => sum + this.#heldBytes.get(p.ref)!, 0);
    let kept = mine.length;
    for (const old of mine) {
      if (old === plan || (kept <= MAX_PLANS && total <= MAX_PLAN_SOURCE_BYTES)) break;
      this.#plans.delete(old.ref);
      total -= this.#heldBytes.get(old.ref)!;
      this.#heldBytes.delete(old.ref);
      kept--;
    }
    return plan;
  }

  /** Any plan by ref; unknown → -32012. */
  lookup(ref: string): Plan {
    const plan = this.#plans.get(normalizeRef(ref));
    if (!plan) {
      throw new RpcError(ErrorCode.UNKNOWN_PLAN, `unknown plan: ${ref}`, { plan_ref: ref });
    }
    return plan;
  }

  /** A plan the caller owns in this session; unknown → -32012, someone else's → -32010. */
  owned(ref: string, session: string, principal: string): Plan {
    const plan = this.lookup(ref);
    if (plan.session !== session || plan.principal !== principal) {
      throw new RpcError(
        ErrorCode.LEASH_DENIED,
        `plan ${ref} belongs to another principal or session`,
        {
          reason: "not_owner",
          plan_ref: plan.ref,
        },
      );
    }
    return plan;
  }

  /** The caller's plans in a session, oldest first (K-PLAN-2). */
  listFor(session: string, principal: string): Plan[] {
    return [...this.#plans.values()].filter((p) =>
      p.session === session && p.principal === principal
    );
  }

  /** Plans awaiting a decision, newest first: all for approvers, else the caller's own (K-APPR-4). */
  awaiting(principal: string, approver: boolean): Plan[] {
    return [...this.#plans.values()]
      .filter((p) => (p.approval === "pending" || p.approval === "requested"))
      .filter((p) => approver || p.principal === principal)
      .reverse();
  }
}
