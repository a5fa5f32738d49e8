import type { RpcErrorObject } from "../protocol/errors.ts";
import { boundText } from "../protocol/bound_text.ts";
import { refToUri } from "../protocol/refs.ts";

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

/** Pretty JSON (two-space indent) of a value. */
export function prettyJson(value: unknown): string {
  return JSON.stringify(value, null, 2) ?? "null";
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

const SHORT_REF_KEYS = ["ref", "task", "plan_ref", "pty_id"] as const;

/** The link of a result or error data: its URI and display name, by the M-OUT-3 order. */
export function deriveLink(r: unknown): { uri: string; name: string } | null {
  if (!isObject(r)) return null;
  const shortRef = SHORT_REF_KEYS.map((k) => r[k]).find((v) => typeof v === "string") as
    | string
    | undefined;
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
  if (uri === null) return null;
  return { uri, name: shortRef ?? uri };
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

/** The envelope of a kernel success `r` (M-OUT-1..3). */
export function toolSuccess(r: unknown, withLinks: boolean): ToolResult {
  const structured = Array.isArray(r) ? { items: r } : isObject(r) ? r : { value: r };
  const link = deriveLink(r);
  const text = isObject(r) && typeof r.render === "string" ? r.render : prettyJson(structured);
  return envelope(text, link, structured, false, withLinks);
}

/** The envelope of a kernel error (M-OUT-4); kernel errors are never JSON-RPC errors of `tools/call`. */
export function toolError(e: RpcErrorObject, withLinks: boolean): ToolResult {
  const structured: Record<string, unknown> = { code: e.code, message: e.message };
  if (e.data !== undefined) structured.data = e.data;
  return envelope(prettyJson(structured), deriveLink(e.data), structured, true, withLinks);
}
