import { cutText } from "../protocol/bound_text.ts";
import { STRUCTURED_LIMIT } from "../protocol/limits.ts";
import { prettyJson } from "./pretty_json.ts";

const encoder = new TextEncoder();

/** UTF-8 length of the compact JSON text of `value`, as the facade writes it. */
function jsonBytes(value: unknown): number {
  return encoder.encode(JSON.stringify(value) ?? "null").length;
}

/** UTF-8 takes at most this many bytes per UTF-16 code unit of a string. */
const MAX_BYTES_PER_UNIT = 3;

/** The members a truncated structuredContent keeps, so the rest stays reachable (M-OUT-7). */
const ADDRESS_KEYS = ["ref", "uri", "task", "plan_ref", "code"] as const;
/**
 * Longest address kept or linked to: kernel refs and URIs are far shorter, so anything longer
 * (an id the caller sent, echoed back in an error) is not one (M-OUT-3, M-OUT-7).
 */
export const ADDRESS_MAX = 1024;

/** A text to cut: the part that may be kept, and the line count of the whole text it came from. */
interface Cuttable {
  head: string;
  lines: number;
  /** Whether `head` already lost lines, so every cut of it needs a marker. */
  cut: boolean;
}

function lineCount(text: string, trailingNewlineEndsText = true): number {
  let newlines = 0;
  for (let i = text.indexOf("\n"); i >= 0; i = text.indexOf("\n", i + 1)) newlines++;
  return newlines + (trailingNewlineEndsText && text.endsWith("\n") ? 0 : 1);
}

/**
 * A render as a {@link Cuttable}: a render the kernel already cut counts the lines its marker
 * names, so cutting it again does not understate how much is left to fetch. Only a marker that
 * names `uri`, the result's own, is the kernel's: output may end in a line that looks like one
 * (a saved render of another ref), and its number is no count of this render's lines.
 */
function renderCuttable(render: string, uri: string | null): Cuttable {
  const tail = ` more lines, fetch via ${uri ?? "ref"})`;
  const open = render.lastIndexOf("…(", render.length - tail.length);
  const count = render.slice(open + 2, render.length - tail.length);
  if (!render.endsWith(tail) || open < 0 || !/^[0-9]+$/.test(count)) {
    return { head: render, lines: lineCount(render), cut: false };
  }
  const head = render.slice(0, open);
  // The kept part is whole lines, each ending in "\n", or a piece of the first line.
  return { head, lines: lineCount(head, false) - 1 + Number(count), cut: true };
}

/**
 * The longest V-RENDER-3 cut of `text` whose JSON string encoding is at most `budget` bytes, or
 * null when not even the marker fits. The limit shrinks by the escaping overhead until it fits.
 */
function fitString(text: Cuttable, uri: string | null, budget: number): string | null {
  // Each pass below shortens the cut by a byte or more: when not even the marker fits, say so
  // at once rather than after `budget` passes.
  if (jsonBytes(`…(${text.lines} more lines, fetch via ${uri ?? "ref"})`) > budget) return null;
  const textBytes = encoder.encode(text.head).length;
  for (let limit = budget; limit > 0;) {
    const cut = !text.cut && textBytes <= limit
      ? text.head
      : cutText(text.head, text.lines, uri, limit);
    const size = jsonBytes(cut);
    if (size <= budget) return cut;
    // Scale by the escaping overhead, and always below this cut, so each pass drops a line.
    const cutBytes = encoder.encode(cut).length;
    limit = Math.min(limit, cutBytes) - 1;
    limit = Math.min(limit, Math.floor(cutBytes * budget / size));
  }
  return null;
}

/**
 * Bounds the JSON text of a tool result's structuredContent `sc` to {@link STRUCTURED_LIMIT}
 * bytes (M-OUT-7): first by cutting `sc.render` again, else by replacing `sc` with
 * `{truncated, bytes, preview}` plus its address members (`extra` supplies those of an error's
 * data, `uri` the link URI). `uri` also names where to fetch the rest in the markers; `pretty`
 * is the pretty JSON of `sc` when the caller already made it (it can be large).
 */
export function boundStructured(
  sc: Record<string, unknown>,
  uri: string | null,
  pretty: string | null,
  extra: Record<string, unknown>,
): Record<string, unknown> {
  const json = JSON.stringify(sc);
  // Most results are far below the bound: their length tells without encoding them.
  if (json.length * MAX_BYTES_PER_UNIT <= STRUCTURED_LIMIT) return sc;
  const full = encoder.encode(json).length;
  if (full <= STRUCTURED_LIMIT) return sc;
  if (typeof sc.render === "string") {
    const rest = jsonBytes({ ...sc, render: "" }) - 2;
    const render = fitString(renderCuttable(sc.render, uri), uri, STRUCTURED_LIMIT - rest);
    if (render !== null) return { ...sc, render };
  }
  const truncated: Record<string, unknown> = { truncated: true, bytes: full };
  // Members of `sc` itself win (an error's numeric `code` over its data's string `code`).
  for (const source of [extra, sc]) {
    for (const k of ADDRESS_KEYS) {
      const v = source[k];
      if (typeof v === "number" || (typeof v === "string" && v.length <= ADDRESS_MAX)) {
        truncated[k] = v;
      }
    }
  }
  if (uri !== null && truncated.uri === undefined && uri.length <= ADDRESS_MAX) truncated.uri = uri;
  const preview = pretty ?? prettyJson(sc);
  const room = STRUCTURED_LIMIT - jsonBytes({ ...truncated, preview: "" }) + 2;
  const source = { head: preview, lines: lineCount(preview), cut: false };
  truncated.preview = fitString(source, uri, room) ?? "";
  return truncated;
}
