import { z } from "zod";
import { JOURNAL_QUERY_DEFAULT_LIMIT, JOURNAL_QUERY_MAX_LIMIT } from "../../protocol/limits.ts";
import { cutHead } from "./head.ts";
import { type EffectKind, effectKindOf } from "../policy/effects.ts";

const I64_MIN = -(2n ** 63n);
const I64_MAX = 2n ** 63n - 1n;
const DOUBLE_I64_BOUND = 2 ** 63;

/**
 * A ns bound in the signed 64-bit range (K-JQ-1). Params arrive as doubles, in which 2^63 - 1
 * reads as 2^63, so a double at that bound is taken as the largest 64-bit value.
 */
const ns = z.union([
  z.bigint().min(I64_MIN).max(I64_MAX),
  z.number().int().min(-DOUBLE_I64_BOUND).max(DOUBLE_I64_BOUND)
    .transform((v) => v === DOUBLE_I64_BOUND ? I64_MAX : BigInt(v)),
], { message: "must be an integer in the signed 64-bit range" });

/** Params of `journal.query` (K-JQ-1), normalized: effect kinds in snake form, limit resolved. */
export const journalQueryParams = z.object({
  since: ns.nullish(),
  until: ns.nullish(),
  principal: z.string().nullish(),
  head: z.string().nullish().transform((h) => h == null ? h : cutHead(h)),
  ok: z.boolean().nullish(),
  effects: z.array(z.string()).nullish().transform((names, ctx) => {
    const kinds = new Set<EffectKind>();
    for (const name of names ?? []) {
      const kind = effectKindOf(name);
      if (kind === null) {
        ctx.addIssue({
          code: z.ZodIssueCode.custom,
          message: `unknown effect kind: ${name}`,
        });
        return z.NEVER;
      }
      kinds.add(kind);
    }
    return [...kinds];
  }),
  limit: z.number().int().min(0).max(JOURNAL_QUERY_MAX_LIMIT).nullish()
    .transform((v) => v || JOURNAL_QUERY_DEFAULT_LIMIT),
});

/** A parsed `journal.query` request: the input of `Journal.query`. */
export type JournalQuery = z.output<typeof journalQueryParams>;
