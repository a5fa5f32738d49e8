/** Param schemas of `parse`, `complete` and `explain` (SPEC §3.3); unknown members are ignored. */
import { z } from "zod";

/** `parse {src}` (K-PARSE-1). */
export const ParseParams = z.object({ src: z.string() });

/** `complete {src, cursor?}`: cursor is a UTF-8 byte offset, clamped by the handler (K-COMP-1). */
export const CompleteParams = z.object({
  src: z.string(),
  cursor: z.number().int().nullish(),
});

/** `explain {src}`; an `ast` input is not supported (K-EXPL-1). */
export const ExplainParams = z.object({ src: z.string() });
