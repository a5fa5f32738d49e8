import { outUri } from "../../protocol/refs.ts";
import type { Attachment } from "../session/attachment.ts";
import { elideValue, resolveBudget } from "../values/elide.ts";
import type { ElideOverride } from "../values/params.ts";
import { renderBounded } from "../values/render.ts";
import { transcriptValue } from "../values/spilled_outcome.ts";
import { ValueUri } from "../values/uri.ts";

/** The K-EXEC-3 core: a transcript value elided for the caller, with its bounded render. */
export interface TranscriptResult {
  ref: string;
  uri: string;
  value: unknown;
  render: string;
}

/**
 * Builds the K-EXEC-3 result of a transcript value for this caller's budget and tty setting;
 * `render` is the value's bounded render for that tty setting when the caller has it already.
 */
export async function transcriptResult(
  attachment: Attachment,
  ref: string,
  elide: ElideOverride | null | undefined,
  render?: string,
): Promise<TranscriptResult> {
  const looked = attachment.session.lookup(ref);
  const { n } = looked;
  const value = await transcriptValue(looked.value);
  const uri = outUri(n);
  return {
    ref,
    uri,
    value: await elideValue(value, resolveBudget(elide), new ValueUri(uri), attachment.tty),
    render: render ?? await renderBounded(value, uri, attachment.tty),
  };
}
