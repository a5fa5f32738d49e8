import { type KernelClient, kernelDisconnected } from "./kernel_client.ts";
import { type ClientReply, type ClientRequests, Withdrawal } from "./client_requests.ts";
import { sleep } from "../protocol/timers.ts";
import { SLICE_MS } from "../protocol/limits.ts";
import { UNSHOWABLE } from "../protocol/unshowable.ts";
import { cutUtf8, utf8Prefix, utf8Suffix } from "../protocol/utf8.ts";
import { shellWord } from "./client_config.ts";

/** The command shown in the approval form is cut to this many UTF-8 bytes (M-ELICIT-2). */
export const PROMPT_SRC_BYTES = 2000;
/** At most this many effects are listed in the form, one per line. */
export const PROMPT_EFFECT_LINES = 20;
/** Each effect line is cut to this many UTF-8 bytes. */
export const PROMPT_LINE_BYTES = 300;

/** What the human decided in the client: approve or deny, or nothing (the call answers as before). */
export type ClientDecision = "approved" | "denied" | null;

type Rec = Record<string, unknown>;

const encoder = new TextEncoder();

function isObject(v: unknown): v is Rec {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/**
 * `text` cut to `limit` UTF-8 bytes in its middle, its start and its longer end kept around `…`:
 * a path's end names the file and the directory that matter (`…/vendor/evil`, `…/id_ed25519`),
 * which a cut at the end hid.
 */
export function cutMiddle(text: string, limit: number): string {
  if (encoder.encode(text).length <= limit) return text;
  const head = utf8Prefix(text, Math.floor((limit - 3) / 3));
  return `${head}…${utf8Suffix(text, limit - 3 - encoder.encode(head).length)}`;
}

/** Combining marks one character keeps in the form (Vietnamese or Devanagari need two or three). */
const SHOWN_MARKS = 3;
/**
 * Combining marks past the {@link SHOWN_MARKS}th on one character: a client that draws them
 * stacks them over the lines around (above the command: the effects the human reads).
 */
const PILED_MARKS = new RegExp(`(?<=\\p{M}{${SHOWN_MARKS}})\\p{M}+`, "gu");

/**
 * `text` with every {@link UNSHOWABLE} character written as a visible `\u{…}` escape, and the
 * combining marks piled on one character past {@link SHOWN_MARKS} as a count of them.
 */
function shown(text: string): string {
  return text.replace(UNSHOWABLE, (c) => `\\u{${c.codePointAt(0)!.toString(16)}}`)
    .replace(PILED_MARKS, (marks) => ` (${[...marks].length} more combining marks) `);
}

/** A list entry of an effect line that more entries follow is cut to this many UTF-8 bytes. */
export const PROMPT_ITEM_BYTES = 120;
/** Room an effect line keeps for saying how many entries it leaves out. */
const MORE_ROOM = 24;

/**
 * One effect as one line of at most {@link PROMPT_LINE_BYTES}: its kind, then its members'
 * values (K-EFF-1 shapes), escaped. A list's entries are cut to {@link PROMPT_ITEM_BYTES} when
 * more follow, so one long path cannot push the next out of sight, and the entries the line has
 * no room for, with K-EFF-7's `<list>_more`, are counted at its end: a path is named or counted.
 * Values are cut in their middle ({@link cutMiddle}): a path's end names its file.
 */
function effectLine(effect: unknown): string {
  if (!isObject(effect)) return shown(String(JSON.stringify(effect)));
  const room = PROMPT_LINE_BYTES - MORE_ROOM;
  let line = shown(String(effect.kind));
  let left = 0;
  for (const [key, value] of Object.entries(effect)) {
    if (key.endsWith("_more")) left += Number(value) || 0;
  }
  // [separator, text] for every value shown, in order: a list's entries after its first by ", "
  const items: [string, string][] = [];
  for (const [key, value] of Object.entries(effect)) {
    if (key === "kind" || key.endsWith("_more") || value === null || value === undefined) continue;
    if (!Array.isArray(value)) items.push([" ", `${key}=${String(value)}`]);
    else value.forEach((item, i) => items.push([i === 0 ? " " : ", ", String(item)]));
  }
  for (const [i, [separator, item]] of items.entries()) {
    const free = room - encoder.encode(line + separator).length;
    const limit = i === items.length - 1 ? free : Math.min(PROMPT_ITEM_BYTES, free);
    if (limit < 8) {
      left += items.length - i;
      break;
    }
    line += separator + cutMiddle(shown(item), limit);
  }
  return left > 0 ? `${line} (and ${left} more)` : line;
}

/**
 * A reported list as form lines (`- ` before each, each cut to {@link PROMPT_LINE_BYTES}), the
 * first {@link PROMPT_EFFECT_LINES} of it and a line counting the rest with `more` (K-EFF-7's
 * `<list>_more`); none when the list is empty or absent.
 */
function listLines(list: unknown, more: unknown, line: (item: unknown) => string): string[] {
  const items = Array.isArray(list) ? list : [];
  const lines = items.slice(0, PROMPT_EFFECT_LINES).map((item) =>
    `- ${cutUtf8(shown(line(item)), PROMPT_LINE_BYTES)}`
  );
  const left = items.length - lines.length + (Number(more) || 0);
  if (left > 0) lines.push(`- … and ${left} more`);
  return lines;
}

/** A run of more spaces than this inside a command line is shown as a count of them. */
const SHOWN_SPACES = 16;
/** What counts as a space there: every blank character (no-break, em, ideographic, braille blank). */
const BLANK = "[ \\u00a0\\u1680\\u2000-\\u200a\\u202f\\u205f\\u2800\\u3000]";

/**
 * The command as quoted lines (`│ ` before each), tabs kept and other unshowable characters
 * escaped, a run of blank lines, and a long run of spaces in a line, shown as saying how many,
 * and a command cut to {@link PROMPT_SRC_BYTES} ending in a line saying how much is not shown:
 * nothing in it can pass for the form's own text, push its end out of sight or hide behind the cut.
 * `truncated`: `src` is only the start of the command (K-APPR-4), so how much is left is unknown.
 */
function commandLines(src: string, truncated: boolean): string[] {
  const out: string[] = [];
  let blank = 0;
  const flush = () => {
    if (blank > 1) out.push(`│ (${blank} empty lines)`);
    else if (blank === 1) out.push("│");
    blank = 0;
  };
  const cut = cutUtf8(src, PROMPT_SRC_BYTES);
  for (const line of cut.split("\n")) {
    if (line.trim() === "") {
      blank++;
      continue;
    }
    flush();
    const spaced = line.replaceAll("\t", "    ").replace(
      new RegExp(`${BLANK}{${SHOWN_SPACES + 1},}`, "g"),
      (run) => ` (${run.length} spaces) `,
    );
    out.push(`│ ${shown(spaced)}`);
  }
  flush();
  if (cut !== src) {
    const left = encoder.encode(src).length - encoder.encode(cut.slice(0, -1)).length;
    const more = truncated ? `more than ${left}` : `${left} more`;
    out.push(`(the command goes on: ${more} bytes are not shown here)`);
  }
  return out;
}

/**
 * The line naming the directory a plan runs in (K-PLAN-1's `cwd` path object), escaped and cut
 * in its middle to {@link PROMPT_LINE_BYTES}, or saying it is not known (the plan record has none).
 */
function directoryLine(cwd: unknown, socket: string | null): string {
  if (!isObject(cwd) || typeof cwd.display !== "string") {
    return `Directory: not known here (\`shoal-kernel approvals${socketOption(socket)}\` lists it)`;
  }
  return `Directory: ${cutMiddle(shown(cwd.display), PROMPT_LINE_BYTES)}`;
}

/**
 * The command that denies plan `planRef` from a terminal: with the `--socket` of the kernel that
 * holds it, as -32011's message names it (K-CLI-3), since a terminal finds another socket for
 * another session name (G-SOCK-1) or environment, whose kernel does not know the plan.
 */
function revokeCommand(planRef: unknown, socket: string | null): string {
  return `shoal-kernel deny ${shown(String(planRef))}${socketOption(socket)}`;
}

/** ` --socket PATH` naming `socket` in a terminal command, or nothing when it is not known. */
function socketOption(socket: string | null): string {
  return socket === null ? "" : ` --socket ${shown(shellWord(socket))}`;
}

/**
 * `effects` in the order the form lists them: the opaque ones first, the `proc_spawn` ones last,
 * the rest between in K-EFF-4's order. K-EFF-4 lists one `proc_spawn` per program before
 * `net_connect`, `secret_use` and `opaque`, so twenty programs pushed the effect that says the
 * list is not all the command does, or the connection that makes it irreversible, into the count
 * of those not shown.
 */
function formOrder(effects: unknown): unknown[] {
  const list = Array.isArray(effects) ? effects : [];
  const rank = (e: unknown) =>
    !isObject(e) ? 1 : e.kind === "opaque" ? 0 : e.kind === "proc_spawn" ? 2 : 1;
  return [0, 1, 2].flatMap((r) => list.filter((e) => rank(e) === r));
}

/** The first protocol version whose `elicitation/create` has `mode` (dated versions compare as strings). */
export const MODE_VERSION = "2025-11-25";

/**
 * The `elicitation/create` params asking the human about a plan (M-ELICIT-2): why it needs
 * approval (the kernel's `needs_approval`, so no path that does hides among the harmless ones), its
 * effects one per line (opaque first, programs last), its reversibility and ref, then the command, quoted, and a form with one required
 * `decision`. What the kernel derived comes first, so no command, however long or shaped, can
 * stand in for it. Shaped as protocol `version` defines the request: `mode` only from 2025-11-25.
 */
export function approvalRequest(
  plan: Rec,
  version: string = MODE_VERSION,
  socket: string | null = null,
): Rec {
  const reasons = listLines(plan.needs_approval, plan.needs_approval_more, String);
  const effects = listLines(formOrder(plan.effects), plan.effects_more, effectLine);
  const message = [
    "The agent's command needs your approval (shoal).",
    ...(reasons.length ? ["", "Because:", ...reasons] : []),
    "",
    "Effects:",
    ...(effects.length ? effects : ["- none"]),
    "",
    `Reversibility: ${shown(String(plan.reversibility ?? "unknown"))}`,
    // P-PLAN-2: the plan runs in the directory it was made in, which a relative or opaque command
    // (`make`, `sh build.sh`) depends on, and which the agent may have moved the session to
    directoryLine(plan.cwd, socket),
    `Plan: ${shown(String(plan.plan_ref))}`,
    // K-PLAN-3: an approval stays valid for repeated applies; the human approves that, not one run
    "Approving lets the agent run this plan again later without asking; " +
    `\`${revokeCommand(plan.plan_ref, socket)}\` takes it back.`,
    "",
    "Command:",
    ...commandLines(String(plan.src ?? ""), plan.src_truncated === true),
  ].join("\n");
  return {
    // `mode` exists since 2025-11-25; older clients get their version's form (M-PROTO-1).
    ...(version >= MODE_VERSION && { mode: "form" }),
    message,
    requestedSchema: {
      type: "object",
      properties: {
        decision: {
          type: "string",
          title: "Decision",
          description: "Approve this plan and run it now, or deny it.",
          enum: ["approve", "deny"],
        },
      },
      required: ["decision"],
    },
  };
}

/** The decision in an `ElicitResult`: only `accept` with `decision` approve or deny counts. */
export function decisionOf(result: unknown): "approve" | "deny" | null {
  if (!isObject(result) || result.action !== "accept" || !isObject(result.content)) return null;
  const decision = result.content.decision;
  return decision === "approve" || decision === "deny" ? decision : null;
}

/** The entry for `planRef` in a kernel list (`plan.list`, `approval.list`'s `requests`), if any. */
function entryOf(list: unknown, planRef: string): Rec | undefined {
  return Array.isArray(list) ? list.find((p) => isObject(p) && p.plan_ref === planRef) : undefined;
}

/**
 * The plan the form shows: its `plan.get` record, or, when `plan.get` cannot answer (a source
 * whose syntax tree no frame carries answers -32603, E-4), its `plan.list` entry with `src`: the
 * source the call itself sent, else (a `shoal_apply`) the first 65536 bytes `approval.list` holds
 * of the caller's pending plan (K-APPR-4); null when neither is there. Its `cwd` then comes from
 * that `approval.list` entry too, when the list answers.
 */
async function planOf(
  kernel: KernelClient,
  planRef: string,
  src: string | undefined,
): Promise<Rec | null> {
  try {
    const plan = await kernel.request("plan.get", { plan_ref: planRef });
    return isObject(plan) ? plan : null;
  } catch {
    const entry = entryOf(await kernel.request("plan.list", {}), planRef);
    if (entry === undefined) return null;
    // plan.list has no cwd: the caller's approval.list entry has it, when that list answers
    const listed = await kernel.request("approval.list", {}).catch(() => null);
    const request = entryOf(isObject(listed) ? listed.requests : undefined, planRef);
    const cwd = request?.cwd;
    if (src !== undefined) return { ...entry, src, cwd };
    if (typeof request?.src !== "string") return null;
    return { ...entry, src: request.src, src_truncated: request.src_truncated === true, cwd };
  }
}

/**
 * Asks the human in the client about the plan of a `-32011` and records the answer with the
 * kernel (`plan.approve`/`plan.deny` via client, M-ELICIT-1/2); `src` is the source the call
 * sent, when it sent one; `version` the negotiated protocol version. Any failure on the way — the
 * plan gone, no answer, a refusal by the kernel — is no decision: the call answers as without
 * elicitation and the plan stays pending for the CLI; but the kernel connection dropping throws
 * `kernel disconnected` (M-START-4), and a form still open then is withdrawn. A refusal of a
 * plan that is already what the human chose in the form (they said the same with the CLI
 * meanwhile) is that decision.
 * While the form is open, every {@link SLICE_MS} `heartbeat` is called (the call's progress: a
 * client that resets its timeout on progress, as Claude Code's idle watchdog does, cancelled the
 * call, and with it the form, while the human read it) and the plan is looked at (until a look
 * fails, which tells nothing): one the human approved or denied with `shoal-kernel` meanwhile
 * withdraws the form and is the decision (the call waited for a form nobody would answer any
 * more, until the client gave up).
 */
export async function askInClient(
  kernel: KernelClient,
  client: ClientRequests,
  planRef: string,
  signal: AbortSignal,
  src: string | undefined,
  version: string,
  heartbeat: ((message: string) => Promise<void>) | null,
): Promise<ClientDecision> {
  // The kernel the plan is pending in: once its connection drops, the next request would
  // autostart a new kernel that never had the plan, and the call is in flight (M-START-4).
  const conn = await kernel.connection().catch(() => null);
  if (conn === null) return null;
  const elsewhere = new AbortController();
  try {
    const plan = await planOf(kernel, planRef, src);
    if (plan === null) return null;
    const asking = client.request(
      "elicitation/create",
      approvalRequest(plan, version, kernel.config.socket),
      AbortSignal.any([signal, elsewhere.signal]),
    );
    const started = Date.now();
    let reply: ClientReply | null = null;
    let looking = true;
    asking.then((r) => reply = r);
    while (reply === null && !signal.aborted) {
      await Promise.race([asking, sleep(SLICE_MS), conn.closed]);
      if (reply !== null || signal.aborted) break;
      if (conn.isClosed) throw kernelDisconnected();
      // A look that fails tells nothing: the form stays open (plan.list of an agent holding
      // many plans answers response too large, K-PLAN-2, and withdrew every form at once), and
      // is not tried again: each try made the kernel build that list anew, every second.
      const now = looking
        ? await approvalOf(kernel, planRef).catch(() => {
          looking = false;
          return null;
        })
        : null;
      if (conn.isClosed) throw kernelDisconnected();
      if (now === "approved" || now === "denied") {
        elsewhere.abort(new Withdrawal(`the plan was ${now} with shoal-kernel`));
        return now;
      }
      const waited = ((Date.now() - started) / 1000).toFixed(1);
      await heartbeat?.(`${planRef} awaits the human's decision, ${waited}s elapsed`);
    }
    const answer = await asking;
    if (!answer.ok || signal.aborted) return null;
    const decision = decisionOf(answer.result);
    if (decision === null) return null;
    const decided = decision === "approve" ? "approved" : "denied";
    try {
      await kernel.request(decision === "approve" ? "plan.approve" : "plan.deny", {
        plan_ref: planRef,
        via: "client",
      });
    } catch (e) {
      // Refused as no longer pending: the human may have said the same with `shoal-kernel
      // approve`/`deny` while the form was open (K-APPR-2/3), and the plan already is what the
      // form asks; any other state is no decision.
      if (await approvalOf(kernel, planRef) !== decided) throw e;
    }
    return decided;
  } catch {
    // A kernel that went away with the plan fails the call as every call in flight then fails.
    if (conn.isClosed) throw kernelDisconnected();
    return null;
  } finally {
    // A form still open when the call stops waiting for it is withdrawn, not left to the human.
    elsewhere.abort(new Withdrawal(conn.isClosed ? "the kernel disconnected" : "no longer needed"));
  }
}

/** The `approval` of the caller's plan `planRef` now (its `plan.list` entry), if it is listed. */
async function approvalOf(kernel: KernelClient, planRef: string): Promise<unknown> {
  return entryOf(await kernel.request("plan.list", {}), planRef)?.approval;
}
