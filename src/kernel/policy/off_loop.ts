import { ErrorCode, type ErrorCodeValue, RpcError } from "../../protocol/errors.ts";
import {
  INLINE_LOOKUPS,
  INLINE_PARSE_LIMIT,
  INLINE_PARSE_UNITS,
  LARGE_PARSE_SOURCE,
  WORKER_HEAP_LIMIT,
} from "../../protocol/limits.ts";
import { JsonText } from "../../protocol/rpc.ts";
import { deriveEffects, type EffectAnalysis, type EffectState, TooManyLookups } from "./effects.ts";
import { plainCommand } from "../bash/plain_command.ts";
import { passesParseBudget } from "../bash/parse_budget.ts";

/** A job for the analysis worker. */
export interface AnalysisJob {
  id: number;
  src: string;
  /** Session facts: present → effects are derived too. */
  state: EffectState | null;
  /** Whether the caller sends the AST. */
  wantAst: boolean;
}

/** A parsed source: its AST in wire form, and its effects when session facts were given. */
export interface ParsedSource {
  /**
   * The AST (K-PARSE-2) as an object or, from the worker, as JSON text; null when it was not
   * asked for or its JSON exceeds the frame limit (no response could carry it).
   */
  ast: unknown;
  analysis: EffectAnalysis | null;
}

interface Reply {
  id: number;
  astJson?: string | null;
  analysis?: EffectAnalysis | null;
  error?: { code: ErrorCodeValue; message: string; data?: unknown };
  /** The worker's heap after the job, in bytes. */
  heapBytes: number;
}

/**
 * Which worker a job goes to: sources past {@link LARGE_PARSE_SOURCE} code units have one of their
 * own, so that a source of megabytes (seconds of parsing) never holds an ordinary one behind it in
 * one queue: another connection's 9 KB exec waited the whole 15 s parse of a 2 MB source (E-4).
 */
type Lane = "ordinary" | "large";

/** The analysis worker and the jobs it has not answered yet. */
interface AnalysisWorker {
  lane: Lane;
  worker: Worker;
  waiting: Map<number, (reply: Reply) => void>;
  /** Set once its heap passed the bound: it takes no new job and ends when it has none left. */
  retired: boolean;
  /** Retires it once it has been idle for {@link WORKER_IDLE_MS}; set while it owes no reply. */
  idleTimer: ReturnType<typeof setTimeout> | null;
}

/**
 * How long the worker may sit without a job before it ends: its isolate holds the bash parser
 * and its heap, 30-50 MiB of the kernel's RSS (scripts/bench/memory.ts), for the rare source analysed
 * off the event loop; the next such source starts a new one (~330 ms more than a warm worker's job,
 * mostly loading the parser).
 */
export const WORKER_IDLE_MS = 10_000;

/** The worker in service of each lane, if any. */
const current: Record<Lane, AnalysisWorker | null> = { ordinary: null, large: null };
let nextId = 1;

/**
 * The worker's module: its source beside this one, or in the kernel's bundle (scripts/kernel_bundle.ts)
 * the bundled worker beside the chunk this module was bundled into.
 */
const WORKER_MODULE = new URL(
  import.meta.url.endsWith(".ts") ? "./analysis_worker.ts" : "./analysis_worker.js",
  import.meta.url,
);

/** A new analysis worker of `lane`; its replies settle the jobs it was sent. */
function startWorker(lane: Lane): AnalysisWorker {
  const worker = new Worker(WORKER_MODULE, { type: "module" });
  const entry: AnalysisWorker = {
    lane,
    worker,
    waiting: new Map(),
    retired: false,
    idleTimer: null,
  };
  worker.onmessage = (message: MessageEvent<Reply>) => {
    const done = entry.waiting.get(message.data.id);
    entry.waiting.delete(message.data.id);
    if (message.data.heapBytes > WORKER_HEAP_LIMIT) retire(entry);
    endIfIdle(entry);
    done?.(message.data);
  };
  worker.onerror = (event: ErrorEvent) => {
    event.preventDefault();
    const error = { code: ErrorCode.INTERNAL_ERROR, message: `analysis failed: ${event.message}` };
    for (const [id, done] of entry.waiting) done({ id, error, heapBytes: 0 });
    entry.waiting.clear();
    retire(entry);
    endIfIdle(entry);
  };
  return entry;
}

/**
 * Takes `w` out of service: later jobs go to a fresh worker. A worker's heap does not shrink back
 * by itself, so one that grew on a large source is replaced to give the memory back.
 */
function retire(w: AnalysisWorker): void {
  w.retired = true;
  if (current[w.lane] === w) current[w.lane] = null;
}

/**
 * Terminates a retired worker once it owes no reply; one in service that owes none is retired
 * after {@link WORKER_IDLE_MS} unless a job comes first.
 */
function endIfIdle(w: AnalysisWorker): void {
  if (w.waiting.size > 0) return;
  if (w.retired) {
    w.worker.terminate();
    return;
  }
  const timer = setTimeout(() => {
    retire(w);
    endIfIdle(w);
  }, WORKER_IDLE_MS);
  Deno.unrefTimer(timer);
  w.idleTimer = timer;
}

/** A job waiting for its lane's worker, and what settles it. */
interface Queued {
  job: AnalysisJob;
  settle: (reply: Reply) => void;
}

/**
 * The jobs of each lane not yet sent to its worker, by whom they are for (a connection), in the
 * order their turns come: the worker is sent one job at a time, of each in turn, so one
 * connection's pipelined sources hold another's behind one of them, not all (E-4: a 9 KB
 * script's explain waited for 9 of another connection's 10 pipelined 64 KB ones, ~6 s).
 */
const queued: Record<Lane, Map<object, Queued[]>> = { ordinary: new Map(), large: new Map() };
/** Whether a lane's worker has a job: the next is sent once it answers. */
const busy: Record<Lane, boolean> = { ordinary: false, large: false };
/** Whom jobs are for when the caller names no one. */
const NOBODY = {};

/** Queues `job` for `owner` in its lane and waits for the worker's reply. */
function inWorker(job: AnalysisJob, owner: object): Promise<Reply> {
  const lane: Lane = job.src.length > LARGE_PARSE_SOURCE ? "large" : "ordinary";
  return new Promise<Reply>((settle) => {
    const jobs = queued[lane].get(owner);
    if (jobs === undefined) queued[lane].set(owner, [{ job, settle }]);
    else jobs.push({ job, settle });
    sendNext(lane);
  });
}

/**
 * Sends the worker in service of `lane` (started on demand) the next job of whoever is first in
 * turn, who then goes last, unless it has a job already.
 */
function sendNext(lane: Lane): void {
  if (busy[lane]) return;
  const first = queued[lane].entries().next();
  if (first.done) return;
  const [owner, jobs] = first.value;
  const { job, settle } = jobs.shift()!;
  queued[lane].delete(owner);
  if (jobs.length > 0) queued[lane].set(owner, jobs);
  busy[lane] = true;
  const w = current[lane] ??= startWorker(lane);
  if (w.idleTimer !== null) clearTimeout(w.idleTimer);
  w.idleTimer = null;
  w.waiting.set(job.id, (reply) => {
    busy[lane] = false;
    settle(reply);
    // after the worker's handler has retired it, if it does
    queueMicrotask(() => sendNext(lane));
  });
  w.worker.postMessage(job);
}

/**
 * The AST of a parsed source for a response. One too large for any frame is -32603 "response too
 * large", as the writer would answer for any oversized response (W-RPC-5).
 */
export function sendableAst(ast: unknown): unknown {
  if (ast === null) throw new RpcError(ErrorCode.INTERNAL_ERROR, "response too large");
  return ast;
}

/**
 * Parses `src` and, given `state`, derives its effects (K-PARSE-1, K-EFF-3). A source longer than
 * {@link INLINE_PARSE_LIMIT} code units, of more than {@link INLINE_PARSE_UNITS} words and
 * operators, or naming more than {@link INLINE_LOOKUPS} programs to look up is handled by a worker,
 * so parsing, analysing and serializing it never keep the event loop from answering other
 * connections (E-4); the result is the same either way. A syntax error rejects with the parser's
 * `RpcError(-32001)`. The worker takes the jobs of different `owner`s (connections) in turn.
 * The bash parser is loaded on the first source that is not a plain command
 * (issue 33): a kernel's first execs are often plain, and loading it takes about 110 ms and 20 MiB.
 */
export async function analyzeOffLoop(
  src: string,
  state: EffectState | null,
  wantAst: boolean,
  owner: object = NOBODY,
): Promise<ParsedSource> {
  if (src.length <= INLINE_PARSE_LIMIT && passesParseBudget(src, INLINE_PARSE_UNITS) < 0) {
    const ast = plainCommand(src) ?? (await import("../bash/recent_parses.ts")).parseRecent(src);
    try {
      return {
        ast,
        analysis: state === null ? null : deriveEffects(ast, src, state, INLINE_LOOKUPS),
      };
    } catch (e) {
      if (!(e instanceof TooManyLookups)) throw e;
    }
  }
  const reply = await inWorker({ id: nextId++, src, state, wantAst }, owner);
  if (reply.error) throw new RpcError(reply.error.code, reply.error.message, reply.error.data);
  const ast = reply.astJson ? new JsonText(reply.astJson) : null;
  return { ast, analysis: reply.analysis ?? null };
}
