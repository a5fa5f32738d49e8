import { JOURNAL_HEAD_SCALARS } from "../../protocol/limits.ts";
import { scalarSlice } from "../values/js_string.ts";

/**
 * The J-2 `head` of a source: its first whitespace-separated word, cut to 256 scalars so that
 * rows, `journal` events and the `head` filter stay small whatever the source.
 */
export function headOf(src: string): string {
  return cutHead(src.trim().split(/\s+/, 1)[0]);
}

/** A `head` (or a `head` filter value) cut to 256 scalars, as stored (J-2). */
export function cutHead(word: string): string {
  return word.length <= JOURNAL_HEAD_SCALARS ? word : scalarSlice(word, 0, JOURNAL_HEAD_SCALARS);
}
