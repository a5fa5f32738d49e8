import { z } from "zod";
import { RAW_CHUNK_LIMIT } from "../../protocol/limits.ts";
import { isHash } from "../store/cas.ts";

const uint = z.number().int().nonnegative();
/**
 * A position in a value: an integer JavaScript holds exactly. A bound past it (`1e300`) stood in
 * the selection's URI in exponent form (`slice=0..1e+300`), which no `shoal://` reader parses.
 */
const position = uint.max(Number.MAX_SAFE_INTEGER);

/** A per-call elision override (K-EXEC-1, V-ELIDE-2): non-negative integers, each optional. */
export const elideParams = z.object({
  max_bytes: uint.nullish(),
  max_rows: uint.nullish(),
  max_items: uint.nullish(),
});

/** A parsed per-call elision override. */
export type ElideOverride = z.output<typeof elideParams>;

/** Params of `value.get` (K-VAL-1); `format` defaults to `json`, `offset` to 0. */
export const valueGetParams = z.object({
  ref: z.string(),
  path: z.string().nullish(),
  slice: z.tuple([position, position]).nullish(),
  format: z.enum(["json", "render", "raw"]).nullish().transform((v) => v ?? "json"),
  elide: elideParams.nullish(),
  offset: position.nullish().transform((v) => v ?? 0),
});

/** A parsed `value.get` request. */
export type ValueGetParams = z.output<typeof valueGetParams>;

/** Params of `blob.get` (K-BLOB-1); `offset` defaults to 0, `length` to 65536. */
export const blobGetParams = z.object({
  hash: z.string().refine(isHash, "hash must be sha256:<64 lowercase hex> or 64 hex digits"),
  offset: position.nullish().transform((v) => v ?? 0),
  length: z.number().int().min(1).max(RAW_CHUNK_LIMIT).nullish()
    .transform((v) => v ?? RAW_CHUNK_LIMIT),
});

/** A parsed `blob.get` request. */
export type BlobGetParams = z.output<typeof blobGetParams>;
