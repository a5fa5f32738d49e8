import { z } from "zod";
import { parseBash } from "../../bash/ast.ts";
import { complete } from "../../bash/complete.ts";
import { attached, type MethodSpec, unattached } from "../method.ts";
import { analyze } from "../../plans/analysis.ts";

/** `parse`, `complete` and `explain` (K-PARSE-*, K-COMP-1, K-EXPL-1): nothing runs or is stored. */
export const BASH_METHODS: MethodSpec[] = [
  unattached("parse", z.object({ src: z.string() }), (_ctx, p) => ({
    ast_version: 1,
    ast_lang: "bash",
    ast: parseBash(p.src),
  })),
  unattached(
    "complete",
    z.object({ src: z.string(), cursor: z.number().int().nullish() }),
    ({ attachment }, p) =>
      complete(
        p.src,
        p.cursor ?? undefined,
        attachment?.session.state.cwd ?? null,
        Deno.env.get("PATH") ?? "",
      ),
  ),
  attached("explain", z.object({ src: z.string() }), async ({ kernel, attachment }, p) => {
    const a = await analyze(kernel, attachment, p.src);
    return {
      ast_version: 1,
      ast_lang: "bash",
      ast: a.ast,
      effects: a.effects,
      reversibility: a.reversibility,
      verdict: a.verdict,
      plan_ref: null,
    };
  }),
];
