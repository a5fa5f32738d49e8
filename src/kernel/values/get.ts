import { RAW_CHUNK_LIMIT } from "../../protocol/limits.ts";
import { elideValue, resolveBudget } from "./elide.ts";
import type { ValueGetParams } from "./params.ts";
import { selectPath } from "./path.ts";
import { type RawChunk, rawChunk } from "./raw_chunk.ts";
import { renderBounded } from "./render.ts";
import { sliceValue } from "./slice.ts";
import { ValueUri } from "./uri.ts";
import type { Value } from "./value.ts";
import type { Wire } from "./wire.ts";

/** Who is asking, for `value.get`: the looked-up value's URI and the attachment's `tty`. */
export interface ValueGetContext {
  /** URI of the transcript value, e.g. `shoal://out/12`. */
  uri: string;
  /** The attachment's `client.tty`; renders are stripped of ANSI escapes when false. */
  tty: boolean;
}

/** The result of `value.get` in each format (K-VAL-2..4). */
export type ValueGetResult =
  | { ref: string; value: Wire }
  | { ref: string; render: string }
  | ({ ref: string } & RawChunk);

/**
 * `value.get` on an already looked-up transcript value (K-VAL-1..5): path, then slice, then the
 * format. Bad paths, slices, raw types and offsets → -32005 with `{ref, path}`.
 */
export async function valueGet(
  value: Value,
  params: ValueGetParams,
  ctx: ValueGetContext,
): Promise<ValueGetResult> {
  const { ref } = params;
  const path = params.path ?? null;
  let v = path ? selectPath(value, path, ref) : value;
  if (params.slice) v = await sliceValue(v, params.slice[0], params.slice[1], ref, path);
  const uri = new ValueUri(ctx.uri, path ?? "", params.slice ?? null);
  switch (params.format) {
    case "json":
      return { ref, value: await elideValue(v, resolveBudget(params.elide), uri, ctx.tty) };
    case "render":
      return { ref, render: await renderBounded(v, uri.toString(), ctx.tty) };
    case "raw": {
      const size = Math.max(
        1,
        Math.min(params.elide?.max_bytes ?? RAW_CHUNK_LIMIT, RAW_CHUNK_LIMIT),
      );
      return { ref, ...await rawChunk(v, params.offset, size, ref, path) };
    }
  }
}
