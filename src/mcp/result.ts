import type { RpcErrorObject } from "../protocol/errors.ts";
import { boundText } from "../protocol/bound_text.ts";
import { refToUri } from "../protocol/refs.ts";
import { prettyJson } from "./pretty_json.ts";
import { ADDRESS_MAX, boundStructured } from "./structured_bound.ts";

/** The first protocol version whose clients get `resource_link` content items (M-PROTO-1). */
export const RESOURCE_LINK_VERSION = "2025-06-18";

/** A `text` content item. */
export interface TextItem {
  type: "text";
  text: string;
}

/** A `resource_link` content item (M-OUT-3). */
export interface LinkItem {
  type: "resource_link";
  uri: string;
  name: string;
  mimeType: "application/json";
}

/** A `tools/call` result (M-OUT-1/4). */
export interface ToolResult {
  [key: string]: unknown;
  content: (TextItem | LinkItem)[];
  structuredContent: Record<string, unknown>;
  isError: boolean;
}

/** Whether a negotiated protocol version gets `resource_link` items (dated versions compare as strings). */
export function linksAllowed(version: string): boolean {
  return version >= RESOURCE_LINK_VERSION;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

const SHORT_REF_KEYS = ["ref", "task", "plan_ref", "pty_id"] as const;

/**
 * The link of a result or error data: its URI and display name, by the M-OUT-3 order; none for
 * a URI longer than {@link ADDRESS_MAX}.
 */
export function deriveLink(r: unknown): { uri: string; name: string } | null {
  if (!isObject(r)) return null;
  let shortRef: string | undefined;
  for (const k of SHORT_REF_KEYS) {
    const v = r[k];
    if (typeof v === "string") {
      shortRef = v;
      break;
    }
  }
  let uri: string | null = null;
  if (typeof r.uri === "string") uri = r.uri;
  else if (isObject(r.value) && r.value.$ === "ref" && typeof r.value.uri === "string") {
    uri = r.value.uri;
  } else {
    for (const k of SHORT_REF_KEYS) {
      const v = r[k];
      if (typeof v === "string") {
        uri = refToUri(v);
        if (uri !== null) break;
      }
    }
  }
  // A marker naming a longer URI would not fit V-RENDER-3's bound, nor one in M-OUT-7's: such a
  // "ref" is what the caller sent, echoed back in an error, and nothing to fetch.
  if (uri === null || uri.length > ADDRESS_MAX) return null;
  return { uri, name: shortRef !== undefined && shortRef.length <= ADDRESS_MAX ? shortRef : uri };
}

function envelope(
  text: string,
  link: { uri: string; name: string } | null,
  structuredContent: Record<string, unknown>,
  isError: boolean,
  withLinks: boolean,
): ToolResult {
  const content: (TextItem | LinkItem)[] = [
    { type: "text", text: boundText(text, link?.uri ?? null) },
  ];
  if (link !== null && withLinks) {
    content.push({
      type: "resource_link",
      uri: link.uri,
      name: link.name,
      mimeType: "application/json",
    });
  }
  return { content, structuredContent, isError };
}

function isElided(v: unknown): boolean {
  return isObject(v) && v.$ === "ref";
}

/** Whether a result's `value` is all there: no elided ref at its top level, nor in an outcome's out/err. */
function isComplete(value: unknown): boolean {
  if (!isObject(value) || isElided(value)) return false;
  return value.$ !== "outcome" || (!isElided(value.out) && !isElided(value.err));
}

/** The envelope of a kernel success `r` (M-OUT-1..3, M-OUT-7). */
export function toolSuccess(r: unknown, withLinks: boolean): ToolResult {
  const link = deriveLink(r);
  const uri = link?.uri ?? null;
  if (isObject(r) && typeof r.render === "string") {
    // A complete value already carries all its render shows: send it once (M-OUT-1).
    let structured = r;
    if (isComplete(r.value)) {
      const { render: _, ...rest } = r;
      structured = rest;
    }
    return envelope(r.render, link, boundStructured(structured, uri, null, {}), false, withLinks);
  }
  const structured = Array.isArray(r) ? { items: r } : isObject(r) ? r : { value: r };
  const pretty = prettyJson(structured);
  return envelope(pretty, link, boundStructured(structured, uri, pretty, {}), false, withLinks);
}

/** The envelope of a kernel error (M-OUT-4, M-OUT-7); kernel errors are never JSON-RPC errors of `tools/call`. */
export function toolError(e: RpcErrorObject, withLinks: boolean): ToolResult {
  const structured: Record<string, unknown> = { code: e.code, message: e.message };
  if (e.data !== undefined) structured.data = e.data;
  const link = deriveLink(e.data);
  const pretty = prettyJson(structured);
  const address = isObject(e.data) ? e.data : {};
  const bounded = boundStructured(structured, link?.uri ?? null, pretty, address);
  return envelope(pretty, link, bounded, true, withLinks);
}
