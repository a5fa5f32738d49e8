import { ErrorCode, RpcError } from "../../protocol/errors.ts";
import type { Attachment } from "../session/attachment.ts";
import { analyzeOffLoop, sendableAst } from "../policy/off_loop.ts";
import { cwdBytesOf, shellCwd, spawnDir } from "../bash/shell_state.ts";
import { dirIdentity } from "../bash/dir_identity.ts";
import { pathObject } from "../values/path_object.ts";
import type { PlanServices } from "./plan_services.ts";
import type { ApprovalState, Plan } from "./store.ts";
import { type Effect, fillBinHashes, type Reversibility } from "../policy/effects.ts";
import { reportedMember, reportEffects } from "../policy/effect_report.ts";
import { callerEffects, hiddenTargets, shownEffects, shownLine } from "./shown_paths.ts";
import type { Grants, Verdict } from "../policy/grants.ts";
import type { Sandboxing } from "../sandbox/command.ts";
import { quoted } from "../bash/quote.ts";

/** Parsed source with its effects judged for one caller (K-EXEC-2 steps 1–3). */
export interface Analysis {
  /** The AST in wire form when asked for, null when not or too large to send (`analyzeOffLoop`). */
  ast: unknown;
  effects: Effect[];
  reversibility: Reversibility;
  verdict: Verdict;
  /** The paths a symlink led to, with the form the source wrote (`EffectAnalysis.written`). */
  written: [string, string][];
}

/** Effects derived for a source, with its AST when asked for. */
type Derived = {
  ast: unknown;
  effects: Effect[];
  reversibility: Reversibility;
  written: [string, string][];
};

/** How often the effects are derived again when execs of the session keep ending meanwhile. */
const STATE_RECHECKS = 3;

/** The `opaque` reason of effects derived while the session's state kept changing. */
export const SESSION_CHANGED = "the session changed while the source was analysed";

/**
 * Parses `src` (off the event loop when large, E-4) and derives its effects from the session state
 * now, with bin hashes when the policy asks (K-EFF-3); the AST too when `wantAst`. They hold for
 * the state the caller's run starts from, taken right after (no wait between, K-BASH-2): an exec
 * that ended while they were derived changed that state (an agent's `export T=…` racing its own
 * `rm "$T"`, judged with the old T and run with the new), so they are derived again on it; when
 * the state keeps changing they are made `opaque` (K-EFF-1: the analysis gave up).
 */
export async function currentEffects(
  attachment: Attachment,
  src: string,
  wantAst: boolean,
): Promise<Derived> {
  const { shell } = attachment.session;
  for (let round = 0;; round++) {
    const merges = shell.merges;
    const derived = await effectsNow(attachment, src, wantAst);
    if (shell.merges === merges) return derived;
    if (round === STATE_RECHECKS) {
      const opaque = derived.effects.some((e) => e.kind === "opaque");
      const effects: Effect[] = opaque
        ? derived.effects
        : [...derived.effects, { kind: "opaque", reason: SESSION_CHANGED }];
      return { ...derived, effects, reversibility: "unknown" };
    }
  }
}

/** {@link currentEffects} from the session state as it is when called. */
async function effectsNow(attachment: Attachment, src: string, wantAst: boolean): Promise<Derived> {
  const { shell } = attachment.session;
  const state = shell.view(attachment.principal);
  const { ast, analysis } = await analyzeOffLoop(
    src,
    {
      cwd: state.cwd,
      ...(state.cwdBytes === undefined ? {} : { cwdLossy: true }),
      env: Object.fromEntries(state.env),
      changedEnv: new Set(shell.changedEnv(attachment.principal)),
      vars: Object.fromEntries(state.vars),
      home: state.env.get("HOME"),
      sessionCommands: new Set([...state.funcs.keys(), ...state.aliases.keys()]),
    },
    wantAst,
    attachment,
  );
  const { effects, reversibility, written } = analysis!;
  if (!attachment.grants.wantsBinHashes) return { ast, effects, reversibility, written };
  return {
    ast,
    effects: await fillBinHashes(
      effects,
      state.env.get("PATH") ?? "",
      state.cwdBytes === undefined ? state.cwd : null,
    ),
    reversibility,
    written,
  };
}

/** Parses and judges `src` for the caller, with its AST when `wantAst`; a syntax error throws -32001. */
export async function analyze(
  attachment: Attachment,
  src: string,
  wantAst: boolean,
): Promise<Analysis> {
  const { ast, effects, reversibility, written } = await currentEffects(attachment, src, wantAst);
  const verdict = attachment.grants.verdict(effects, reversibility);
  return { ast, effects, reversibility, verdict, written };
}

/** The approval state a new plan starts in (K-EXEC-7). */
function initialApproval(verdict: Verdict): ApprovalState {
  if (verdict === "allow") return "not_required";
  return verdict === "deny" ? "blocked" : "pending";
}

/** Publishes an `approval` event about a plan (§9.2). */
export function publishApproval(
  kernel: PlanServices,
  plan: Plan,
  event: "pending" | "requested" | "granted" | "denied",
  by: string | null,
  reason: string | null = null,
): void {
  kernel.bus.publish("approval", {
    event,
    plan_ref: plan.ref,
    session: plan.session,
    principal: plan.principal,
    ...reportEffects(plan.effects),
    by,
    reason,
  });
}

/** Stores a plan for the caller (P-PLAN-2) and announces it when it awaits approval. */
export function storePlan(
  kernel: PlanServices,
  attachment: Attachment,
  src: string,
  analysis: Analysis,
): Plan {
  const view = attachment.session.shell.view(attachment.principal);
  const identity = view.cwdIdentity ??
    (view.cwdBytes === undefined ? dirIdentity(view.cwd) : null);
  const plan = kernel.plans.store({
    src,
    session: attachment.session.name,
    principal: attachment.principal,
    ...shellCwd(view),
    ...(identity === null ? {} : { cwdIdentity: identity }),
    effects: analysis.effects,
    written: analysis.written,
    reversibility: analysis.reversibility,
    approval: initialApproval(analysis.verdict),
  });
  if (plan.approval === "pending") publishApproval(kernel, plan, "pending", null);
  return plan;
}

/** `shoal://plan/<hex>` of a plan ref. */
export function planUri(ref: string): string {
  return `shoal://plan/${ref.slice("plan:".length)}`;
}

/** Whether a plan still awaits a decision (K-PLAN-1 `approval_pending`). */
function approvalPending(plan: Plan, verdict: Verdict): boolean {
  return verdict === "approval_required" && plan.approval !== "approved" &&
    plan.approval !== "denied";
}

/**
 * A plan's effects as its owner sees them: where they lead when it awaits approval (the form the
 * human approves in the client is built from them, and the paths are in the owner's grants),
 * else as the source wrote a path out of its grants ({@link callerEffects}).
 */
export function shownPlanEffects(
  plan: Plan,
  verdict: Verdict,
  owner: Grants,
): Effect[] {
  return verdict === "approval_required" ? plan.effects : callerEffects(plan, owner);
}

/**
 * A plan's wire record as `plan.list` shows it (K-PLAN-2), judged by its owner's grants and with
 * its paths as the owner may see them ({@link callerEffects}); `plan.get` adds ast, src, cwd.
 */
export function planSummary(plan: Plan, owner: Grants): Record<string, unknown> {
  const verdict = owner.verdict(plan.effects, plan.reversibility);
  return {
    ast_version: 1,
    ast_lang: "bash",
    plan_ref: plan.ref,
    uri: planUri(plan.ref),
    session: plan.session,
    principal: plan.principal,
    ...reportEffects(shownPlanEffects(plan, verdict, owner)),
    reversibility: plan.reversibility,
    verdict,
    ...reportedMember("needs_approval", owner.approvalReasons(plan.effects, plan.reversibility)),
    approval_pending: approvalPending(plan, verdict),
    approved: plan.approval === "approved",
    approval: plan.approval,
    approved_by: plan.approvedBy,
    created_ns: plan.createdNs,
  };
}

/**
 * The full `plan.get` record (K-PLAN-1). A plan keeps only its source: the AST, a hundred times
 * larger, is parsed again (off the event loop when large) for each request.
 */
export async function planRecord(plan: Plan, owner: Grants): Promise<Record<string, unknown>> {
  const ast = sendableAst((await analyzeOffLoop(plan.src, null, true)).ast);
  return { ...planSummary(plan, owner), ast, src: plan.src, cwd: pathObject(cwdBytesOf(plan)) };
}

/**
 * Refuses a `run` by an unknown principal (no policy entry, P-PRIN-1): every verdict for it is
 * deny whatever the source, so it is refused with -32010 before any parsing and cannot make the
 * kernel parse (E-4).
 */
export function refuseUnknownPrincipal(grants: Grants): void {
  if (grants.entry !== null) return;
  throw new RpcError(ErrorCode.LEASH_DENIED, "no policy entry for this principal", {
    verdict: "deny",
    effects: [],
    reason: "unknown_principal",
  });
}

/** How many missing grants a denial's message names; `data.missing` holds them all (bounded). */
const MESSAGE_GRANTS = 3;

/** `word` as one shell word: as is when plain, else single-quoted. */
function shellWord(word: string): string {
  return /^[A-Za-z0-9_./:=@%+-]+$/.test(word) ? word : quoted(word);
}

/**
 * The -32010 of a deny verdict on `analysis` (K-EXEC-2, K-PTY-1): `refusal` followed by the
 * grants the caller lacks (a few; `data.missing` holds them all), so an exec and a PTY of the
 * same line are refused alike (M-ONB-3). Where a link out of the caller's grants leads is not
 * told (the path as written is).
 */
export function denial(attachment: Attachment, analysis: Analysis, refusal: string): RpcError {
  const hidden = hiddenTargets(analysis.written, attachment.grants);
  const lines = attachment.grants.missing(analysis.effects).map((line) => shownLine(line, hidden));
  const missing = reportedMember("missing", lines);
  const named = (missing.missing as string[]).slice(0, MESSAGE_GRANTS);
  const unnamed = lines.length - named.length;
  const lacks = named.length === 0
    ? ""
    : `: ${attachment.principal} lacks ${named.join(", ")}${
      unnamed > 0 ? ` and ${unnamed} more` : ""
    } (the grants to add to its policy entry)`;
  return new RpcError(ErrorCode.LEASH_DENIED, `${refusal}${lacks}`, {
    verdict: "deny",
    ...reportEffects(shownEffects(analysis.effects, hidden)),
    ...missing,
  });
}

/**
 * Refuses a run the caller may not start now (K-EXEC-2 step 3): deny → -32010, approval →
 * stored plan and -32011, a hermetic principal without a sandbox or a cwd the sandbox does not
 * show → -32010. Returns the sandbox the run goes into (null: unconfined).
 */
export function enforceVerdict(
  kernel: PlanServices,
  attachment: Attachment,
  src: string,
  analysis: Analysis,
): Sandboxing | null {
  if (analysis.verdict === "deny") throw denial(attachment, analysis, "policy denies this source");
  const dir = spawnDir(attachment.session.shell.view(attachment.principal));
  if (analysis.verdict === "approval_required") {
    // A sandboxed run that could not start even once approved (a cwd that the sandbox, opened
    // by the approved effects, does not show) stores no plan: nobody is asked to approve it
    // (P-SBX-3). An unconfined hermetic principal still gets its plan first (K-EXEC-2 order).
    if (attachment.grants.sandboxed) attachment.grants.sandboxFor(dir, analysis.effects);
    const plan = storePlan(kernel, attachment, src, analysis);
    // what the caller tells a human, whose client may show no approval form (M-ONB-3, K-CLI-3)
    // with this socket: a terminal whose XDG_RUNTIME_DIR or TMPDIR differs finds another
    const socket = `--socket ${shellWord(kernel.config.socketPath)}`;
    const how = `the local human runs \`shoal-kernel approve ${plan.ref} ${socket}\` (or \`deny\`)`;
    throw new RpcError(ErrorCode.APPROVAL_REQUIRED, `this source needs approval: ${how}`, {
      verdict: "approval_required",
      ...reportEffects(analysis.effects),
      ...reportedMember(
        "needs_approval",
        attachment.grants.approvalReasons(analysis.effects, analysis.reversibility),
      ),
      plan_ref: plan.ref,
    });
  }
  return attachment.grants.sandboxFor(dir);
}
