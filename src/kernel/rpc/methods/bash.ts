import { ErrorCode, RpcError } from "../../../protocol/errors.ts";
import { analyzeOffLoop } from "../../bash/off_loop.ts";
import { complete } from "../../bash/complete.ts";
import { attached, type MethodSpec, unattached } from "../method.ts";
import { analyze } from "../../plans/analysis.ts";
import { CompleteParams, ExplainParams, ParseParams } from "../../policy/params.ts";

/** An AST for a response; one too large for any frame is the writer's "response too large". */
function sendable(ast: unknown): unknown {
  if (ast === null) throw new RpcError(ErrorCode.INTERNAL_ERROR, "response too large");
  return ast;
}

/** `parse`, `complete` and `explain` (K-PARSE-*, K-COMP-1, K-EXPL-1): nothing runs or is stored. */
export const BASH_METHODS: MethodSpec[] = [
  unattached("parse", ParseParams, async (_ctx, p) => ({
    ast_version: 1,
    ast_lang: "bash",
    ast: sendable((await analyzeOffLoop(p.src, null, true)).ast),
  })),
  unattached(
    "complete",
    CompleteParams,
    ({ attachment }, p) =>
      complete(
        p.src,
        p.cursor ?? undefined,
        attachment?.session.state.cwd ?? null,
        Deno.env.get("PATH") ?? "",
      ),
  ),
  attached("explain", ExplainParams, async ({ attachment }, p) => {
    const a = await analyze(attachment, p.src);
    return {
      ast_version: 1,
      ast_lang: "bash",
      ast: sendable(a.ast),
      effects: a.effects,
      reversibility: a.reversibility,
      verdict: a.verdict,
      plan_ref: null,
    };
  }),
];
