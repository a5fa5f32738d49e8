import { ErrorCode, invalidParams, RpcError } from "../protocol/errors.ts";
import { KILL_GRACE_MS } from "../protocol/limits.ts";
import { toolError, type ToolResult } from "./result.ts";
import {
  callTool,
  Cancelled,
  checkArguments,
  clientCancelled,
  connectedUnlessCancelled,
  decideInClient,
  envelopeOf,
  kernelCall,
  terminalResult,
  type ToolContext,
} from "./tools.ts";
import { after } from "../protocol/timers.ts";
import { SLICE_MS } from "../protocol/limits.ts";
import { cutUtf8 } from "../protocol/utf8.ts";

/** The `_meta` key naming the task a result belongs to (MCP 2025-11-25). */
export const RELATED_TASK = "io.modelcontextprotocol/related-task";
/** The `_meta` key carrying the kernel's `task:N` of an MCP task (M-TASKS-1). */
export const KERNEL_TASK = "shoal/task";
/** How often clients are asked to poll a task (M-TASKS-1). */
export const POLL_INTERVAL_MS = 1000;
/**
 * An error naming an unknown taskId repeats at most this many bytes of it: a taskId as long as
 * the frame allows, repeated whole, made the answer a frame over the 16 MiB limit (W-FRAME-2).
 */
export const SHOWN_TASK_ID_BYTES = 100;
/** At most this many MCP tasks are remembered; the oldest finished ones are forgotten first. */
export const MAX_MCP_TASKS = 256;

/** The status vocabulary of MCP tasks (SDK 1.32.2 `TaskStatusSchema`, minus input_required). */
export type TaskStatus = "working" | "completed" | "failed" | "cancelled";

/** An MCP `Task` as the SDK 1.32.2 `TaskSchema` shapes it. */
export interface McpTask {
  taskId: string;
  status: TaskStatus;
  ttl: null;
  createdAt: string;
  lastUpdatedAt: string;
  pollInterval: number;
}

interface Entry {
  task: McpTask;
  /** The kernel's `task:N`, null for a task that finished within its call. */
  ref: string | null;
  /**
   * Resolves once the task is terminal, with its CallToolResult or the JSON-RPC error (a bridge
   * failure, M-OUT-5) that the synchronous call would have answered kept in {@link settled}.
   */
  done: Promise<void>;
  /**
   * The `tasks/result` calls waiting for {@link done}, each woken once and removed when its
   * call is cancelled: a wait raced against `done` stayed attached to it until the task ended,
   * ~2.6 KiB per cancelled call (100 MiB for 40,000 of a running task).
   */
  waiters: Set<(settled: Settled) => void>;
  /** How {@link done} settled, once it did. */
  settled: Settled | null;
  /**
   * Throws `kernel disconnected` once the kernel the task lives in is gone: a restarted kernel's
   * `task:N` is another run (M-START-4).
   */
  sameKernel: () => void;
  /**
   * The caller's `timeout_ms` of the run, if any: a cancel clears it, so a budget running out
   * during the cancel no longer settles the task completed with a `timed_out` answer.
   */
  budget: Budget | null;
}

/** A run's wait budget (`timeout_ms`, unbounded when undefined) and its `timed_out` answer. */
interface Budget {
  ms: number | undefined;
  pending: Record<string, unknown>;
}

/**
 * How a task's {@link Entry.done} settled: its result kept as UTF-8 JSON, a byte a character.
 * Kept as the object, a result at the 64 KiB text and structuredContent bounds (M-OUT-2, M-OUT-7)
 * held ~260 KiB of heap (its texts two-byte strings once one character is not Latin-1, as the
 * cut's '…' marker is), and the facade keeps 256 of them: +101..136 MiB resident.
 */
type Settled = { ok: true; json: Uint8Array } | { ok: false; error: unknown };

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** The check of a task that finished within its call: it needs its kernel no more. */
const ANY_KERNEL = () => {};

/** The MCP status of a kernel task state (K-TASK-1 → M-TASKS-1). */
export function statusOf(state: unknown): TaskStatus {
  return state === "completed" || state === "failed" || state === "cancelled" ? state : "working";
}

/** A new task under a random UUID (2025-11-25 wants unguessable ids). */
function newTask(status: TaskStatus): McpTask {
  const now = new Date().toISOString();
  return {
    taskId: crypto.randomUUID(),
    status,
    ttl: null,
    createdAt: now,
    lastUpdatedAt: now,
    pollInterval: POLL_INTERVAL_MS,
  };
}

/** The `_meta` of a reply about a task: its kernel ref (M-TASKS-1). */
function kernelMeta(entry: Entry): Record<string, unknown> {
  return { _meta: { [KERNEL_TASK]: entry.ref } };
}

/** A never-aborted signal: a task outlives the `tools/call` that created it. */
const NEVER = new AbortController().signal;

/**
 * The MCP tasks of one facade (M-TASKS-1): `shoal_exec` calls with a `task` member run as kernel
 * background tasks under a random UUID, watched in {@link SLICE_MS} slices (progress on the
 * call's token, `notifications/tasks/status` once terminal) until their result is exactly the
 * one the synchronous call would have answered. Every task is this facade's principal's, in its
 * session.
 */
export class McpTasks {
  #entries = new Map<string, Entry>();

  /**
   * `notify` sends a notification; `negotiated` says whether tasks are still negotiated: after a
   * second `initialize` that chose a version without them, a task's status and progress are no
   * longer announced (M-PROTO-1: the facade then behaves exactly as without tasks).
   */
  constructor(
    readonly notify: (method: string, params: Record<string, unknown>) => void,
    readonly negotiated: () => boolean = () => true,
  ) {}

  /**
   * Starts `arguments` of a `shoal_exec` as a task and answers `{task}` at once; validation
   * and bridge failures throw as for a synchronous call, and a call the client cancelled before
   * this answer cancels its kernel task (M-PROG-3). Plan mode and `background` answer at
   * once anyway: their task is created already finished with that answer.
   */
  async create(ctx: ToolContext, name: unknown, args: unknown): Promise<Record<string, unknown>> {
    if (name !== "shoal_exec") {
      checkArguments(name, args);
      // A tool whose taskSupport is forbidden (absent): MCP 2025-11-25 wants -32601.
      throw new RpcError(
        ErrorCode.METHOD_NOT_FOUND,
        `${String(name)} does not support task-augmented calls`,
        { method: "tools/call", tool: name },
      );
    }
    const checked = checkArguments(name, args);
    if (checked.mode === "plan" || checked.background === true) {
      const result = await callTool(ctx, name, checked);
      const status = result.isError ? "failed" : "completed";
      return this.#created(this.#store(null, newTask(status), Promise.resolve(result)));
    }
    const params: Record<string, unknown> = {
      src: checked.src,
      mode: "run",
      position: checked.position ?? "value",
      background: true,
    };
    if (checked.elide !== undefined) params.elide = checked.elide;
    const runCtx = { ...ctx, signal: NEVER, askApproval: null };
    const started = Date.now();
    const connecting = connectedUnlessCancelled(ctx);
    if (connecting !== undefined) await connecting;
    let first = await kernelCall(runCtx, "exec", params);
    if (!first.ok) {
      // Asked during the call that creates the task, as a synchronous call would ask (M-ELICIT-2).
      const decided = await decideInClient(ctx, first.error);
      if ("error" in decided) {
        const result = toolError(decided.error, ctx.withLinks);
        return this.#created(this.#store(null, newTask("failed"), Promise.resolve(result)));
      }
      const { src: _src, mode: _mode, ...runMembers } = params;
      first = await kernelCall(runCtx, "plan.apply", { ...runMembers, plan_ref: decided.approved });
      if (!first.ok) {
        const result = envelopeOf(runCtx, first);
        return this.#created(this.#store(null, newTask("failed"), Promise.resolve(result)));
      }
    }
    const ref = String((first.value as Record<string, unknown>).task);
    const sameKernel = ctx.kernel.sameKernel();
    if (clientCancelled(ctx.signal)) {
      // The client gave up before it learnt the task: nobody could ever cancel it (M-PROG-3).
      try {
        sameKernel();
        await kernelCall(runCtx, "task.cancel", { task: ref });
      } catch {
        // the task ended with its kernel
      }
      throw new Cancelled("cancelled by the client");
    }
    const task = newTask("working");
    const pending = { ...(first.value as Record<string, unknown>), timed_out: true };
    const budget = { ms: checked.timeout_ms as number | undefined, pending };
    const done = this.#watch(runCtx, ref, sameKernel, checked.elide, started, task, budget);
    return this.#created(this.#store(ref, task, done, sameKernel, budget));
  }

  /** `tasks/get`: the task now; unknown → -32602. */
  get(taskId: unknown): Record<string, unknown> {
    const entry = this.#lookup(taskId);
    return { ...entry.task, ...kernelMeta(entry) };
  }

  /**
   * `tasks/list`: every remembered task, oldest first, in one page without `nextCursor`; so any
   * `cursor` is one never issued → -32602 (MCP 2025-11-25).
   */
  list(cursor: unknown): { tasks: McpTask[] } {
    if (cursor !== undefined) throw invalidParams("invalid cursor: tasks/list has one page");
    return { tasks: [...this.#entries.values()].map((e) => e.task) };
  }

  /**
   * `tasks/cancel`: asks the kernel to cancel and answers the task once it ended (or after the
   * kill grace); unknown or already terminal → -32602. A task that ends otherwise than cancelled
   * (bash had exited by itself, or it was terminal in the kernel already) is -32602 too: MCP
   * 2025-11-25 answers a cancel with the task cancelled, and a terminal status never changes.
   */
  async cancel(ctx: ToolContext, taskId: unknown): Promise<Record<string, unknown>> {
    const entry = this.#lookup(taskId);
    const ref = entry.ref;
    if (entry.task.status !== "working" || ref === null) {
      throw invalidParams(`task ${entry.task.taskId} is already ${entry.task.status}`);
    }
    entry.sameKernel();
    // From now on the run ends cancelled (or by itself), not by its budget: a budget that ran
    // out while the grace went on answered -32602 "ended completed" and the timed_out result of
    // a task the kernel then cancelled (K-TASK-5).
    if (entry.budget !== null) entry.budget.ms = undefined;
    // The grace bounds the kernel's answer too: a stopped kernel (SIGSTOP) never gave one, and
    // this answer waited as long; the cancel still reaches the run once the kernel goes on.
    const requested = kernelCall(ctx, "task.cancel", { task: ref });
    requested.catch(() => {}); // failing after the grace, it is no one's answer
    let stopTimer = () => {};
    try {
      await Promise.race([
        requested.then(() => entry.done),
        new Promise<void>((resolve) => stopTimer = after(KILL_GRACE_MS + SLICE_MS, resolve)),
      ]);
    } finally {
      stopTimer();
    }
    if (entry.task.status !== "working" && entry.task.status !== "cancelled") {
      throw invalidParams(`task ${entry.task.taskId} ended ${entry.task.status}, not cancelled`);
    }
    // Not ended yet (a busy or stopped kernel): MCP 2025-11-25 wants the task cancelled before
    // this answer, and cancelled for good whatever the run still does; it answered working.
    if (entry.task.status === "working") this.#settle(entry.task, "cancelled", ref);
    return { ...entry.task, ...kernelMeta(entry) };
  }

  /** `tasks/result`: waits for the terminal state, then the call's result; unknown → -32602. */
  async result(taskId: unknown, signal: AbortSignal): Promise<ToolResult> {
    const entry = this.#lookup(taskId);
    const settled = entry.settled ?? await new Promise<Settled>((resolve, reject) => {
      const cancelled = () => new RpcError(ErrorCode.INTERNAL_ERROR, "cancelled");
      if (signal.aborted) return reject(cancelled());
      const wake = (settled: Settled) => {
        signal.removeEventListener("abort", stop);
        resolve(settled);
      };
      const stop = () => {
        entry.waiters.delete(wake);
        reject(cancelled());
      };
      entry.waiters.add(wake);
      signal.addEventListener("abort", stop, { once: true });
    });
    if (!settled.ok) throw settled.error;
    const result = JSON.parse(decoder.decode(settled.json)) as ToolResult;
    return { ...result, _meta: { [RELATED_TASK]: { taskId: entry.task.taskId } } };
  }

  #lookup(taskId: unknown): Entry {
    const entry = typeof taskId === "string" ? this.#entries.get(taskId) : undefined;
    if (entry === undefined) {
      const shown = typeof taskId === "string" ? taskId : String(JSON.stringify(taskId));
      throw invalidParams(`unknown task: ${cutUtf8(shown, SHOWN_TASK_ID_BYTES)}`);
    }
    return entry;
  }

  /** Remembers `task` of kernel task `ref`, settling with `done` (M-TASKS-1). */
  #store(
    ref: string | null,
    task: McpTask,
    done: Promise<ToolResult>,
    sameKernel = ANY_KERNEL,
    budget: Budget | null = null,
  ): Entry {
    const ended = done.then(() => {}, () => {});
    const entry: Entry = {
      task,
      ref,
      done: ended,
      waiters: new Set(),
      settled: null,
      sameKernel,
      budget,
    };
    // One reaction per task, whoever waits; a failure nobody asks about is no unhandled rejection.
    const wake = (settled: Settled) => {
      entry.settled = settled;
      for (const waiter of entry.waiters) waiter(settled);
      entry.waiters.clear();
    };
    done.then(
      (result) => wake({ ok: true, json: encoder.encode(JSON.stringify(result)) }),
      (error) => wake({ ok: false, error }),
    );
    this.#entries.set(task.taskId, entry);
    this.#forgetOldest();
    return entry;
  }

  /** The `CreateTaskResult` of a new task. */
  #created(entry: Entry): Record<string, unknown> {
    return { task: entry.task, ...kernelMeta(entry) };
  }

  /** Keeps at most {@link MAX_MCP_TASKS}, forgetting the oldest finished tasks first. */
  #forgetOldest(): void {
    for (const [id, entry] of this.#entries) {
      if (this.#entries.size <= MAX_MCP_TASKS) return;
      if (entry.task.status !== "working") this.#entries.delete(id);
    }
  }

  /**
   * Awaits the kernel task in slices (progress after each one still running, M-PROG-2) and
   * settles with the result a synchronous `shoal_exec` would have answered (M-PROG-1 step 3),
   * or rejects with the bridge failure it would have answered as a JSON-RPC error (the kernel
   * gone: `-32603`, M-START-4, M-OUT-5), which `tasks/result` then answers as MCP 2025-11-25
   * wants; the status change is announced with `notifications/tasks/status`. Once the caller's
   * `timeout_ms` (`budget.ms`) is used up it settles, `completed`, with the `timed_out` answer a
   * synchronous call gives then (`budget.pending`; K-EXEC-6: the work goes on as the kernel task).
   */
  async #watch(
    ctx: ToolContext,
    ref: string,
    sameKernel: () => void,
    elide: unknown,
    started: number,
    task: McpTask,
    budget: Budget,
  ): Promise<ToolResult> {
    let result: ToolResult | null = null;
    let failure: unknown = null;
    let status: TaskStatus = "failed";
    let lastProgress = 0;
    try {
      while (true) {
        const left = budget.ms === undefined ? SLICE_MS : budget.ms - (Date.now() - started);
        if (left <= 0) {
          status = "completed";
          result = envelopeOf(ctx, { ok: true, value: budget.pending });
          break;
        }
        const params: Record<string, unknown> = { task: ref, timeout_ms: Math.min(left, SLICE_MS) };
        if (elide !== undefined) params.elide = elide;
        sameKernel();
        const record = await kernelCall(ctx, "task.await", params);
        if (!record.ok) {
          result = envelopeOf(ctx, record);
          break;
        }
        const value = record.value as Record<string, unknown>;
        if (value.timed_out !== true) {
          status = statusOf(value.state);
          result = await terminalResult(ctx, value, elide, Date.now() - started);
          break;
        }
        // None once a cancel settled the task cancelled: MCP 2025-11-25 ends progress there.
        if (ctx.progress !== null && this.negotiated() && task.status === "working") {
          const elapsed = Math.max(Date.now() - started, lastProgress + 1);
          lastProgress = elapsed;
          await ctx.progress(elapsed, `${ref} running, ${(elapsed / 1000).toFixed(1)}s elapsed`);
        }
      }
    } catch (e) {
      failure = e;
    }
    // A cancel that did not see the end settled the task cancelled already: it stays so.
    if (task.status === "working") this.#settle(task, status, ref);
    if (result === null) throw failure;
    return result;
  }

  /** Makes `task` of kernel task `ref` terminal with `status` and announces it (M-TASKS-1). */
  #settle(task: McpTask, status: TaskStatus, ref: string): void {
    task.status = status;
    task.lastUpdatedAt = new Date().toISOString();
    if (this.negotiated()) {
      this.notify("notifications/tasks/status", { ...task, _meta: { [KERNEL_TASK]: ref } });
    }
  }
}
