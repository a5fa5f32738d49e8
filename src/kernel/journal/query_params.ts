import { z } from "zod";
import { JOURNAL_QUERY_DEFAULT_LIMIT, JOURNAL_QUERY_MAX_LIMIT } from "../../protocol/limits.ts";
import { type EffectKind, effectKindOf } from "../policy/effects.ts";

const ns = z.union([z.bigint(), z.number().int()]).transform((v) => BigInt(v));

/** Params of `journal.query` (K-JQ-1), normalized: effect kinds in snake form, limit resolved. */
export const journalQueryParams = z.object({
  since: ns.nullish(),
  until: ns.nullish(),
  principal: z.string().nullish(),
  head: z.string().nullish(),
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
