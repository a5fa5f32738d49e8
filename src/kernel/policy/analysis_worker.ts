/// <reference lib="deno.worker" />
/**
 * Worker entry of `analyzeOffLoop` (E-4): parses a source and, given the session facts, derives its
 * effects, off the kernel's event loop. Replies with the AST as compact JSON text (null when it
 * would not fit in a frame, or was not asked for), or with the error the parse raised, and with the
 * size of its heap afterwards.
 */
import { setPriority } from "node:os";
import { FRAME_LIMIT } from "../../protocol/limits.ts";
import { RpcError } from "../../protocol/errors.ts";
import { deriveEffects } from "./effects.ts";
import { parseBash } from "../bash/ast.ts";
import { boundedAstJson } from "../bash/ast_json.ts";
import type { AnalysisJob } from "./off_loop.ts";

// On Linux the nice value is per thread: this lowers only the worker's, so the event loop's thread
// wins the CPU whenever a request arrives while a large source is analysed (E-4). Elsewhere it would
// lower the whole kernel and every command it spawns.
if (Deno.build.os === "linux") setPriority(0, 10);

self.onmessage = (message: MessageEvent<AnalysisJob>) => {
  const { id, src, state, wantAst } = message.data;
  try {
    const ast = parseBash(src);
    const analysis = state === null ? null : deriveEffects(ast, src, state);
    const astJson = wantAst ? boundedAstJson(ast, FRAME_LIMIT) : null;
    self.postMessage({ id, astJson, analysis, heapBytes: Deno.memoryUsage().heapTotal });
  } catch (e) {
    const error = e instanceof RpcError
      ? { code: e.code, message: e.message, data: e.data }
      : { code: -32603, message: `internal error: ${e instanceof Error ? e.message : e}` };
    self.postMessage({ id, error, heapBytes: Deno.memoryUsage().heapTotal });
  }
};
