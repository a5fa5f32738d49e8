/// <reference lib="deno.worker" />
/**
 * Worker entry of `analyzeOffLoop` (E-4): parses a source and, given the session facts, derives its
 * effects, off the kernel's event loop. Replies with the AST as compact JSON text (null when it
 * would not fit in a frame, or was not asked for), or with the error the parse raised.
 */
import { FRAME_LIMIT } from "../../protocol/limits.ts";
import { RpcError } from "../../protocol/errors.ts";
import { deriveEffects } from "../policy/effects.ts";
import { parseBash } from "./ast.ts";
import type { AnalysisJob } from "./off_loop.ts";

self.onmessage = (message: MessageEvent<AnalysisJob>) => {
  const { id, src, state, wantAst } = message.data;
  try {
    const ast = parseBash(src);
    const analysis = state === null ? null : deriveEffects(ast, state);
    const json = wantAst ? JSON.stringify(ast) : null;
    const astJson = json !== null && json.length <= FRAME_LIMIT ? json : null;
    self.postMessage({ id, astJson, analysis });
  } catch (e) {
    const error = e instanceof RpcError
      ? { code: e.code, message: e.message, data: e.data }
      : { code: -32603, message: `internal error: ${e instanceof Error ? e.message : e}` };
    self.postMessage({ id, error });
  }
};
