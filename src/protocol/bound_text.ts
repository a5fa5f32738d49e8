import { TEXT_LIMIT } from "./limits.ts";
import { isHighSurrogate, isLowSurrogate, utf8Length } from "./utf8.ts";

/**
 * Bounds a text to `limit` UTF-8 bytes by V-RENDER-3: unchanged when it fits; otherwise the
 * longest prefix of whole lines (each followed by `\n`) that fits together with the marker
 * `…(N more lines, fetch via U)` (U = `uri`, or `ref` when null), else the longest
 * scalar-aligned prefix of the first line that fits, followed by the marker.
 */
export function boundText(text: string, uri: string | null, limit = TEXT_LIMIT): string {
  if (utf8Length(text, 0, text.length) <= limit) return text;
  let newlines = 0;
  for (let i = text.indexOf("\n"); i >= 0; i = text.indexOf("\n", i + 1)) newlines++;
  return cutText(text, newlines + (text.endsWith("\n") ? 0 : 1), uri, limit);
}

/**
 * The V-RENDER-3 cut of a text known to exceed `limit`, given only its head (at least its first
 * `limit + 1` bytes, or all of it) and its total line count. Lets a producer bound a text it
 * streams without materializing the rest.
 */
export function cutText(
  head: string,
  totalLines: number,
  uri: string | null,
  limit: number,
): string {
  const where = uri ?? "ref";
  const marker = (kept: number) =>
    `…(${Math.max(0, totalLines - kept)} more lines, fetch via ${where})`;
  let kept = 0;
  let bytes = 0;
  let pos = 0;
  for (let nl = head.indexOf("\n"); nl >= 0; nl = head.indexOf("\n", pos)) {
    const line = utf8Length(head, pos, nl) + 1;
    if (bytes + line + utf8Length(marker(kept + 1)) > limit) break;
    bytes += line;
    kept++;
    pos = nl + 1;
  }
  if (kept > 0) return head.slice(0, pos) + marker(kept);
  const end = head.indexOf("\n");
  const first = end < 0 ? head : head.slice(0, end);
  const tail = marker(0);
  const room = limit - utf8Length(tail);
  let cut = 0;
  let used = 0;
  while (cut < first.length) {
    const step = isHighSurrogate(first.charCodeAt(cut)) && isLowSurrogate(first.charCodeAt(cut + 1))
      ? 2
      : 1;
    const size = utf8Length(first, cut, cut + step);
    if (used + size > room) break;
    used += size;
    cut += step;
  }
  return first.slice(0, cut) + tail;
}
