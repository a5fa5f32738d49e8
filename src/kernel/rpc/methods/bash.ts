import { analyzeOffLoop, sendableAst } from "../../policy/off_loop.ts";
import { complete } from "../../bash/complete.ts";
import { attached, type MethodSpec, unattached } from "../method.ts";
import { analyze } from "../../plans/analysis.ts";
import { CompleteParams, ExplainParams, ParseParams } from "../../policy/params.ts";
import { reportEffects } from "../../policy/effect_report.ts";
import { callerEffects } from "../../plans/shown_paths.ts";

/** `parse`, `complete` and `explain` (K-PARSE-*, K-COMP-1, K-EXPL-1): nothing runs or is stored. */
export const BASH_METHODS: MethodSpec[] = [
  unattached("parse", ParseParams, async ({ conn }, p) => ({
    ast_version: 1,
    ast_lang: "bash",
    ast: sendableAst((await analyzeOffLoop(p.src, null, true, conn)).ast),
  })),
  // A connection whose token lapsed completes as an unattached one (T-TOK-4): no entries of
  // the session's cwd, nor of any directory its principal's grants would let it read.
  unattached("complete", CompleteParams, ({ kernel, conn, attachment }, p) => {
    const caller = attachment !== null && !kernel.tokenLapsed(conn) ? attachment : null;
    return complete(
      p.src,
      p.cursor ?? undefined,
      caller === null ? null : caller.session.shell.view(caller.principal),
      Deno.env.get("PATH") ?? "",
      (dir) => caller !== null && kernel.refreshGrants(caller).mayList(dir),
    );
  }),
  attached("explain", ExplainParams, async ({ attachment }, p) => {
    const a = await analyze(attachment, p.src, true);
    return {
      ast_version: 1,
      ast_lang: "bash",
      ast: sendableAst(a.ast),
      ...reportEffects(callerEffects(a, attachment.grants)),
      reversibility: a.reversibility,
      verdict: a.verdict,
      plan_ref: null,
    };
  }),
];
