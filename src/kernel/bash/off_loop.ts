import { type ErrorCodeValue, RpcError } from "../../protocol/errors.ts";
import { INLINE_PARSE_LIMIT } from "../../protocol/limits.ts";
import { JsonText } from "../../protocol/rpc.ts";
import { deriveEffects, type EffectAnalysis, type EffectState } from "../policy/effects.ts";
import { parseBash } from "./ast.ts";

/** A job for the analysis worker. */
export interface AnalysisJob {
  id: number;
  src: string;
  /** Session facts: present → effects are derived too. */
  state: EffectState | null;
  /** Whether the caller sends or stores the AST. */
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
}

let worker: Worker | null = null;
let nextId = 1;
const waiting = new Map<number, (reply: Reply) => void>();

function analysisWorker(): Worker {
  if (worker === null) {
    worker = new Worker(new URL("./analysis_worker.ts", import.meta.url), { type: "module" });
    worker.onmessage = (message: MessageEvent<Reply>) => {
      const done = waiting.get(message.data.id);
      waiting.delete(message.data.id);
      done?.(message.data);
    };
  }
  return worker;
}

/**
 * Parses `src` and, given `state`, derives its effects (K-PARSE-1, K-EFF-3). A source longer than
 * {@link INLINE_PARSE_LIMIT} code units is handled by a worker, so parsing, analysing and
 * serializing it never keep the event loop from answering other connections (E-4); the result is
 * the same either way. A syntax error rejects with the parser's `RpcError(-32001)`.
 */
export async function analyzeOffLoop(
  src: string,
  state: EffectState | null,
  wantAst: boolean,
): Promise<ParsedSource> {
  if (src.length <= INLINE_PARSE_LIMIT) {
    const ast = parseBash(src);
    return { ast, analysis: state === null ? null : deriveEffects(ast, state) };
  }
  const id = nextId++;
  const reply = await new Promise<Reply>((resolve) => {
    waiting.set(id, resolve);
    const job: AnalysisJob = { id, src, state, wantAst };
    analysisWorker().postMessage(job);
  });
  if (reply.error) throw new RpcError(reply.error.code, reply.error.message, reply.error.data);
  const ast = reply.astJson ? new JsonText(reply.astJson) : null;
  return { ast, analysis: reply.analysis ?? null };
}
