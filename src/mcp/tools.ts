import { ErrorCode, invalidParams, RpcError, type RpcErrorObject } from "../protocol/errors.ts";
import { refNumber, refToUri } from "../protocol/refs.ts";
import type { ClientDecision } from "./client_approval.ts";
import { BridgeError, type KernelClient } from "./kernel_client.ts";
import { TRANSPORT_CLOSED } from "./request_server.ts";
import { toolError, type ToolResult, toolSuccess } from "./result.ts";
import { schemaViolation } from "./schema_check.ts";
import { type ToolDefinition, TOOLS } from "./tool_schemas.ts";
import { SLICE_MS } from "../protocol/limits.ts";

/** What a tool call needs besides its arguments. */
export interface ToolContext {
  kernel: KernelClient;
  /** Whether `resource_link` items may be sent (M-PROTO-1). */
  withLinks: boolean;
  /**
   * Aborted when the client cancels the request (M-PROG-3), or with reason TRANSPORT_CLOSED when
   * the transport closes, which cancels nothing (see {@link clientCancelled}).
   */
  signal: AbortSignal;
  /** Sends one progress notification, when the request asked for progress (M-PROG-2). */
  progress: ((progress: number, message: string) => Promise<void>) | null;
  /**
   * Asks the human in the client about a plan awaiting approval and records the decision
   * (M-ELICIT-2); null when the client or the attachment does not allow it.
   */
  askApproval: ((planRef: string) => Promise<ClientDecision>) | null;
}

/** The outcome of one kernel call: a result, or the error the kernel returned. */
export type KernelOutcome = { ok: true; value: unknown } | { ok: false; error: RpcErrorObject };

/** JSON-RPC protocol errors from the kernel, which are bridge failures rather than tool errors (M-OUT-5). */
const PROTOCOL_CODES: ReadonlySet<number> = new Set([
  ErrorCode.RPC_PARSE_ERROR,
  ErrorCode.INVALID_REQUEST,
  ErrorCode.METHOD_NOT_FOUND,
]);

type Args = Record<string, unknown>;

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** Copies the members of `args` named in `keys` that are present, in that order. */
function pick(args: Args, keys: readonly string[]): Args {
  const out: Args = {};
  for (const k of keys) if (args[k] !== undefined) out[k] = args[k];
  return out;
}

/** One kernel call: its result, or the kernel's error; bridge and protocol failures throw (M-OUT-5). */
export async function kernelCall(
  ctx: ToolContext,
  method: string,
  params: Args,
): Promise<KernelOutcome> {
  try {
    return { ok: true, value: await ctx.kernel.request(method, params) };
  } catch (e) {
    if (e instanceof BridgeError || !(e instanceof RpcError)) throw e;
    if (PROTOCOL_CODES.has(e.code)) throw e;
    return { ok: false, error: e.toObject() };
  }
}

/** The tool result of one kernel call (M-OUT-1/4). */
export function envelopeOf(ctx: ToolContext, outcome: KernelOutcome): ToolResult {
  return outcome.ok
    ? toolSuccess(outcome.value, ctx.withLinks)
    : toolError(outcome.error, ctx.withLinks);
}

/** Thrown when the client cancelled the call: it gets no response (M-PROG-3). */
export class Cancelled extends Error {}

/** Whether the client cancelled the request: the transport closing counts as no cancellation. */
export function clientCancelled(signal: AbortSignal): boolean {
  return signal.aborted && signal.reason !== TRANSPORT_CLOSED;
}

/**
 * Waits for the main kernel connection when there is none yet (an autostarted kernel coming up)
 * and throws {@link Cancelled} when the client cancelled meanwhile: a run cancelled before it
 * was sent is never sent (M-PROG-3; it ran once the kernel was up, after the client had given
 * up on it). Connected, it returns at once and the run is written within its call.
 */
export function connectedUnlessCancelled(ctx: ToolContext): Promise<void> | undefined {
  if (ctx.kernel.connected) return undefined;
  return ctx.kernel.connection().then(() => {
    if (clientCancelled(ctx.signal)) throw new Cancelled("cancelled by the client");
  });
}

/**
 * Runs `exec`/`plan.apply` as a task in {@link SLICE_MS} slices within the caller's budget, with
 * progress after every slice that ends with the task still running, and cancellation of the task
 * once its id is known (M-PROG-1..3). `params` are completed with the first slice's `timeout_ms`.
 */
async function runTaskBacked(
  ctx: ToolContext,
  method: string,
  params: Args,
  budget: number | undefined,
  elide: unknown,
): Promise<ToolResult> {
  const start = Date.now();
  const remaining = () => (budget === undefined ? Infinity : budget - (Date.now() - start));
  params.timeout_ms = Math.min(budget ?? SLICE_MS, SLICE_MS);
  const connecting = connectedUnlessCancelled(ctx);
  if (connecting !== undefined) await connecting;
  const first = await kernelCall(ctx, method, params);
  if (!first.ok) {
    return await afterApproval(ctx, first.error, (planRef) => {
      const apply: Args = { plan_ref: planRef };
      if (params.position !== undefined) apply.position = params.position;
      if (elide !== undefined) apply.elide = elide;
      const left = budget === undefined ? undefined : Math.max(1, remaining());
      return runTaskBacked(ctx, "plan.apply", apply, left, elide);
    });
  }
  if (!isObject(first.value) || first.value.timed_out !== true) {
    return envelopeOf(ctx, first);
  }
  const pending = first.value;
  const task = pending.task;
  // Every later slice and cancel goes to the kernel the task lives in (M-START-4).
  const sameKernel = ctx.kernel.sameKernel();
  let cancelSent = false;
  const cancelTask = () => {
    if (cancelSent || !clientCancelled(ctx.signal)) return;
    cancelSent = true;
    try {
      sameKernel();
    } catch {
      return; // the task ended with its kernel
    }
    ctx.kernel.request("task.cancel", { task }).catch(() => {});
  };
  ctx.signal.addEventListener("abort", cancelTask);
  try {
    let lastProgress = 0;
    // Each pass starts right after a slice that ended with the task still running.
    while (true) {
      if (clientCancelled(ctx.signal)) {
        cancelTask();
        throw new Cancelled("cancelled by the client");
      }
      if (ctx.progress !== null) {
        const elapsed = Math.max(Date.now() - start, lastProgress + 1);
        lastProgress = elapsed;
        await ctx.progress(elapsed, `${task} running, ${(elapsed / 1000).toFixed(1)}s elapsed`);
      }
      if (remaining() <= 0) return envelopeOf(ctx, { ok: true, value: pending });
      const awaitParams: Args = { task, timeout_ms: Math.min(remaining(), SLICE_MS) };
      if (elide !== undefined) awaitParams.elide = elide;
      sameKernel();
      const record = await kernelCall(ctx, "task.await", awaitParams);
      if (!record.ok || !isObject(record.value)) return envelopeOf(ctx, record);
      if (record.value.timed_out !== true) {
        return await terminalResult(ctx, record.value, elide, Date.now() - start);
      }
    }
  } finally {
    ctx.signal.removeEventListener("abort", cancelTask);
  }
}

/**
 * Asks the human in the client about the plan of a `-32011` kernel error, when it has one and
 * the client and attachment allow it (M-ELICIT-2). Returns the error the call answers with when
 * there is no approval (with `data.decision = "denied"` after a denial, else as it was), or the
 * approved plan's ref.
 */
export async function decideInClient(
  ctx: ToolContext,
  error: RpcErrorObject,
): Promise<{ approved: string } | { error: RpcErrorObject }> {
  const data = error.data;
  const planRef = isObject(data) ? data.plan_ref : undefined;
  if (
    error.code !== ErrorCode.APPROVAL_REQUIRED || typeof planRef !== "string" ||
    ctx.askApproval === null
  ) {
    return { error };
  }
  const decision = await ctx.askApproval(planRef);
  if (clientCancelled(ctx.signal)) throw new Cancelled("cancelled by the client");
  if (decision === "approved") return { approved: planRef };
  if (decision === "denied") {
    return { error: { ...error, data: { ...data as Args, decision: "denied" } } };
  }
  return { error };
}

/**
 * The answer to a call the kernel refused with `error`: after an approval in the client, the run
 * of the plan by `runApproved`; otherwise the error {@link decideInClient} leaves (M-ELICIT-2).
 */
async function afterApproval(
  ctx: ToolContext,
  error: RpcErrorObject,
  runApproved: (planRef: string) => Promise<ToolResult>,
): Promise<ToolResult> {
  const decided = await decideInClient(ctx, error);
  if ("approved" in decided) return await runApproved(decided.approved);
  return toolError(decided.error, ctx.withLinks);
}

/** The tool result for a terminal task record (M-PROG-1 step 3 and its fallback). */
export async function terminalResult(
  ctx: ToolContext,
  record: Record<string, unknown>,
  elide: unknown,
  elapsed: number,
): Promise<ToolResult> {
  if (isObject(record.error)) {
    return toolError(record.error as unknown as RpcErrorObject, ctx.withLinks);
  }
  let result = record.result;
  if (!isObject(result)) {
    const ref = record.result_ref;
    if (typeof ref !== "string") return toolSuccess(record, ctx.withLinks);
    // A kernel without the K-TASK-4 `result` member: rebuild it from the stored value.
    const valueParams: Args = { ref };
    if (elide !== undefined) valueParams.elide = elide;
    const value = await kernelCall(ctx, "value.get", valueParams);
    if (!value.ok) return envelopeOf(ctx, value);
    const render = await kernelCall(ctx, "value.get", { ref, format: "render" });
    if (!render.ok) return envelopeOf(ctx, render);
    result = {
      ref,
      uri: refToUri(ref),
      value: isObject(value.value) ? value.value.value : null,
      render: isObject(render.value) ? render.value.render : "",
    };
  }
  return toolSuccess({ ...(result as Args), elapsed_ms: elapsed }, ctx.withLinks);
}

async function simple(ctx: ToolContext, method: string, params: Args): Promise<ToolResult> {
  return envelopeOf(ctx, await kernelCall(ctx, method, params));
}

/**
 * `shoal_get`: `value.get` of the ref; a task ref (`task:N`, V-REF-3) names its result once the task
 * ended, as `shoal://task/N/out` does (M-RES-4), so a model with only the tools can read what its
 * background run printed; before that, or for a task that ended with an error, the task's record.
 */
async function shoalGet(ctx: ToolContext, args: Args): Promise<ToolResult> {
  const selection = pick(args, ["path", "slice", "elide"]);
  if (refNumber("task", args.ref as string) === null) {
    return await simple(ctx, "value.get", { ref: args.ref, ...selection });
  }
  const record = await kernelCall(ctx, "task.get", { task: args.ref });
  if (!record.ok || !isObject(record.value) || typeof record.value.result_ref !== "string") {
    return envelopeOf(ctx, record);
  }
  return await simple(ctx, "value.get", { ref: record.value.result_ref, ...selection });
}

async function shoalExec(ctx: ToolContext, args: Args): Promise<ToolResult> {
  const mode = (args.mode as string | undefined) ?? "run";
  const position = (args.position as string | undefined) ?? "value";
  const base = { src: args.src, mode, position };
  if (mode === "plan") return await simple(ctx, "exec", base);
  if (args.background === true) {
    const started = await kernelCall(ctx, "exec", {
      ...base,
      background: true,
      ...pick(args, ["elide"]),
    });
    if (started.ok) return envelopeOf(ctx, started);
    return await afterApproval(
      ctx,
      started.error,
      (planRef) => simple(ctx, "plan.apply", { plan_ref: planRef, position, background: true }),
    );
  }
  const params: Args = { src: args.src, mode, position, background: false };
  if (args.elide !== undefined) params.elide = args.elide;
  return await runTaskBacked(
    ctx,
    "exec",
    params,
    args.timeout_ms as number | undefined,
    args.elide,
  );
}

type ToolHandler = (ctx: ToolContext, args: Args) => Promise<ToolResult>;

const HANDLERS: Record<string, ToolHandler> = {
  shoal_exec: shoalExec,
  shoal_plan: (ctx, a) => simple(ctx, "exec", { src: a.src, mode: "plan", position: "value" }),
  shoal_apply: (ctx, a) =>
    runTaskBacked(ctx, "plan.apply", { plan_ref: a.plan_ref }, undefined, undefined),
  shoal_get: shoalGet,
  shoal_journal: (ctx, a) => simple(ctx, "journal.query", a),
  shoal_cancel: (ctx, a) => simple(ctx, "task.cancel", { task: a.task }),
  shoal_cap_request: (ctx, a) =>
    simple(ctx, "cap.request", { plan_ref: a.plan_ref, effects: a.effects ?? [] }),
  shoal_pty_open: (ctx, a) =>
    simple(ctx, "pty.open", {
      cmd: a.cmd,
      args: a.args ?? [],
      ...pick(a, ["cols", "rows"]),
      env: a.env ?? {},
    }),
  shoal_pty_send: (ctx, a) => simple(ctx, "pty.send", { pty_id: a.pty_id, input: a.input }),
  shoal_pty_read: (ctx, a) => simple(ctx, "pty.read", { pty_id: a.pty_id }),
  shoal_pty_resize: (ctx, a) =>
    simple(ctx, "pty.resize", { pty_id: a.pty_id, cols: a.cols, rows: a.rows }),
  shoal_pty_close: (ctx, a) => simple(ctx, "pty.close", { pty_id: a.pty_id }),
  shoal_pty_list: (ctx) => simple(ctx, "pty.list", {}),
};

const BY_NAME = new Map<string, ToolDefinition>(TOOLS.map((t) => [t.name, t]));

/** Validates the arguments of a tool call against its schema (M-TOOL-2); throws `-32602`. */
export function checkArguments(name: unknown, args: unknown): Args {
  // Not interpolated unchecked: a deeply nested array would overflow the stack in toString (M-IN-1).
  if (typeof name !== "string") throw invalidParams("invalid params: name must be a string");
  const tool = BY_NAME.get(name);
  if (tool === undefined) throw invalidParams(`unknown tool: ${name}`);
  const value = args === undefined || args === null ? {} : args;
  const violation = schemaViolation(tool.inputSchema, value);
  if (violation !== null) throw invalidParams(`invalid arguments for ${tool.name}: ${violation}`);
  return value as Args;
}

/** Runs one `tools/call` (M-TOOL-2/3/5/6): bridge failures throw, kernel errors become `isError` results. */
export async function callTool(
  ctx: ToolContext,
  name: unknown,
  args: unknown,
): Promise<ToolResult> {
  const checked = checkArguments(name, args);
  return await HANDLERS[name as string](ctx, checked);
}
