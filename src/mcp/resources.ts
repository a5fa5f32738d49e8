import { ErrorCode, invalidParams, RpcError } from "../protocol/errors.ts";
import { boundText } from "../protocol/bound_text.ts";
import { canonicalNumber, refToUri } from "../protocol/refs.ts";
import { BridgeError, type KernelClient } from "./kernel_client.ts";
import { prettyJson } from "./pretty_json.ts";
import { ADDRESS_MAX } from "./structured_bound.ts";
import { utf8Length } from "../protocol/utf8.ts";
import {
  boolParam,
  enumParam,
  intParam,
  jsonObjectParam,
  listParam,
  parseResourceUri,
  quotedInput,
  sliceParam,
  stringParam,
} from "./resource_uri.ts";

const JSON_MIME = "application/json";

/** An entry of `resources/list`. */
export interface ResourceEntry {
  uri: string;
  name: string;
  description: string;
  mimeType: string;
}

/** An entry of `resources/templates/list`. */
export interface TemplateEntry {
  uriTemplate: string;
  name: string;
  description: string;
  mimeType: string;
}

function root(uri: string, name: string, description: string): ResourceEntry {
  return { uri, name, description, mimeType: JSON_MIME };
}

/** The six static resources, listed first (M-RES-1). */
export const ROOTS: readonly ResourceEntry[] = [
  root("shoal://journal", "journal", "Durable command history visible to you, newest first"),
  root("shoal://jobs", "jobs", "Tasks of this session"),
  root("shoal://session/cwd", "cwd", "The session's current working directory"),
  root("shoal://session/env", "env", "Exported environment variable names (values if granted)"),
  root("shoal://session/reef", "reef", "Compatibility stub (always empty)"),
  root("shoal://pty", "pty", "Terminals of this session"),
];

function template(uriTemplate: string, name: string, description: string): TemplateEntry {
  return { uriTemplate, name, description, mimeType: JSON_MIME };
}

/** The nine resource templates, in order (M-RES-2). */
export const TEMPLATES: readonly TemplateEntry[] = [
  template(
    "shoal://out/{n}{?path,slice,format}",
    "transcript-value",
    "Transcript value out:n; path selects a part, slice=a..b a range, format json|render|raw",
  ),
  template("shoal://val/{hash}", "content-value", "Content-addressed bytes (sha256), chunked"),
  template("shoal://task/{id}", "task", "Task record (state, pid, result ref)"),
  template(
    "shoal://task/{id}/out{?path,slice,format}",
    "task-output",
    "A task's result value once it finished, else the task record",
  ),
  template("shoal://plan/{ref}", "plan", "A stored plan with effects and approval state"),
  template("shoal://session/{view}", "session-view", "Session view: cwd, env or reef"),
  template("shoal://pty/{id}", "pty-screen", "A terminal's screen and cursor"),
  template(
    "shoal://journal{?since,until,head,principal,ok,effects,limit}",
    "journal",
    "Journal rows filtered by time (ns), head, principal, ok, effect kinds, limit",
  ),
  template(
    "shoal://events/{channel}{?since,limit}",
    "events",
    "Retained events of a channel after the since cursor",
  ),
];

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

async function optional(kernel: KernelClient, method: string): Promise<unknown> {
  try {
    return await kernel.request(method, {});
  } catch {
    return null;
  }
}

/**
 * Most JSON bytes of one listed resource's description: a PTY's command line is its whole argv
 * (K-PTY-6, megabytes), and 216 entries (M-RES-1) with descriptions this long keep
 * `resources/list` within 64 KiB however their commands are escaped.
 */
export const DESCRIPTION_JSON_BYTES = 120;

/** Bytes `c` (one scalar) takes inside a JSON string as `JSON.stringify` writes it. */
function jsonCharBytes(c: string): number {
  const code = c.codePointAt(0)!;
  if (
    c === '"' || c === "\\" || c === "\b" || c === "\f" || c === "\n" || c === "\r" || c === "\t"
  ) {
    return 2;
  }
  if (code < 0x20 || (code >= 0xd800 && code <= 0xdfff)) return 6; // \u00XX, a lone surrogate
  return utf8Length(c);
}

/** `text` cut at a scalar boundary, ending in `…`, so its JSON string takes at most `limit` bytes. */
export function cutDescription(text: string, limit = DESCRIPTION_JSON_BYTES): string {
  const room = limit - 2; // the quotes
  let used = 0;
  let end = 0;
  let fitsBefore = 0; // where a cut leaving room for the ellipsis (3 bytes) ends
  for (const c of text) {
    used += jsonCharBytes(c);
    if (used > room) return text.slice(0, fitsBefore) + "…";
    end += c.length;
    if (used <= room - 3) fitsBefore = end;
  }
  return text;
}

function dynamicEntries(
  items: unknown,
  key: string,
  describe: (r: Record<string, unknown>) => string,
) {
  if (!Array.isArray(items)) return [];
  const entries: ResourceEntry[] = [];
  for (const item of items.slice(-100)) {
    if (!isObject(item) || typeof item[key] !== "string") continue;
    const uri = refToUri(item[key] as string);
    if (uri !== null) entries.push(root(uri, item[key] as string, cutDescription(describe(item))));
  }
  return entries;
}

/** `resources/list`: the roots, then tasks, plans and PTYs; a failing dynamic call is skipped (M-RES-1). */
export async function listResources(kernel: KernelClient): Promise<{ resources: ResourceEntry[] }> {
  await kernel.connection();
  const tasks = await optional(kernel, "task.list");
  const plans = await optional(kernel, "plan.list");
  const ptys = await optional(kernel, "pty.list");
  return {
    resources: [
      ...ROOTS,
      ...dynamicEntries(tasks, "task", (t) => `${t.state} task: ${t.cmd}`),
      ...dynamicEntries(plans, "plan_ref", (p) => `plan, approval ${p.approval}`),
      ...dynamicEntries(isObject(ptys) ? ptys.ptys : null, "pty_id", (p) => `terminal: ${p.cmd}`),
    ],
  };
}

/** A `resources/read` result (M-RES-5). */
export interface ReadResult {
  [key: string]: unknown;
  contents: ({ uri: string; mimeType: string; text: string } | {
    uri: string;
    mimeType: string;
    blob: string;
  })[];
  structuredContent: unknown;
}

/** What the JSON content of a read is: the result's `value`, its `cwd`, or the result itself. */
type ContentOf = "value" | "cwd" | "self";

function readEnvelope(uri: string, r: unknown, contentOf: ContentOf): ReadResult {
  // A marker naming a URI longer than any kernel's would not fit the text's bound (V-RENDER-3).
  const where = uri.length <= ADDRESS_MAX ? uri : null;
  if (isObject(r)) {
    const text = typeof r.render === "string" ? r.render : r.raw;
    if (typeof text === "string") {
      return {
        contents: [{ uri, mimeType: "text/plain", text: boundText(text, where) }],
        structuredContent: r,
      };
    }
    if (typeof r.raw_base64 === "string") {
      return {
        contents: [{ uri, mimeType: "application/octet-stream", blob: r.raw_base64 }],
        structuredContent: r,
      };
    }
  }
  let content = r;
  if (contentOf === "value" && isObject(r) && "value" in r) content = r.value;
  if (contentOf === "cwd" && isObject(r) && "cwd" in r) content = r.cwd;
  return {
    contents: [{ uri, mimeType: JSON_MIME, text: boundText(prettyJson(content), where) }],
    structuredContent: content,
  };
}

/**
 * Calls the kernel; a kernel error becomes `-32602 kernel error: …` with the error as data
 * (M-RES-6). With `exact`, numbers a double cannot hold are kept as the kernel wrote them.
 */
async function call(
  kernel: KernelClient,
  method: string,
  params: Record<string, unknown>,
  exact = false,
) {
  try {
    return await kernel.request(method, params, exact);
  } catch (e) {
    if (e instanceof RpcError && !(e instanceof BridgeError)) {
      throw invalidParams(`kernel error: ${e.message}`, e.toObject());
    }
    throw e;
  }
}

function defined(params: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(params).filter(([, v]) => v !== undefined));
}

/** The `value.get` query members accepted by `out/…` and `task/{id}/out` (M-RES-4). */
function valueQuery(q: Map<string, string>): Record<string, unknown> {
  return defined({
    path: stringParam(q, "path"),
    slice: sliceParam(q),
    format: enumParam(q, "format", ["json", "render", "raw"]),
    elide: jsonObjectParam(q, "elide"),
    offset: intParam(q, "offset", 0),
  });
}

/** A short ref `kind:id` from a URI id segment that may already be in short form. */
function shortRef(kind: string, segment: string): string {
  return segment.startsWith(`${kind}:`) ? segment : `${kind}:${segment}`;
}

function unknownResource(uri: string): RpcError {
  return invalidParams(`unknown resource: ${quotedInput(uri)}`);
}

/** `resources/read`: maps the URI to a kernel call and wraps the result (M-RES-3..6). */
export async function readResource(kernel: KernelClient, uri: string): Promise<ReadResult> {
  const { segments, query: q } = parseResourceUri(uri);
  const [head, ...rest] = segments;
  const arity = (n: number) => {
    if (rest.length !== n) throw unknownResource(uri);
  };
  switch (head) {
    case "out": {
      arity(1);
      if (canonicalNumber(rest[0]) === null) {
        throw invalidParams(`invalid transcript number in ${quotedInput(uri)}`);
      }
      const r = await call(kernel, "value.get", {
        ref: `out:${rest[0]}`,
        ...valueQuery(q),
      });
      return readEnvelope(uri, r, "value");
    }
    case "val":
      arity(1);
      return readEnvelope(uri, await call(kernel, "blob.get", { hash: rest[0] }), "self");
    case "task":
      if (rest.length === 2 && rest[1] === "out") {
        return await readTaskOutput(kernel, uri, rest[0], q);
      }
      arity(1);
      return readEnvelope(
        uri,
        await call(kernel, "task.get", { task: shortRef("task", rest[0]) }),
        "self",
      );
    case "plan":
      arity(1);
      return readEnvelope(
        uri,
        await call(kernel, "plan.get", { plan_ref: shortRef("plan", rest[0]) }),
        "self",
      );
    case "session":
      arity(1);
      if (rest[0] === "cwd") return readEnvelope(uri, await sessionCwd(kernel), "cwd");
      if (rest[0] === "env" || rest[0] === "reef") {
        return readEnvelope(uri, await call(kernel, `session.${rest[0]}`, {}), "self");
      }
      throw unknownResource(uri);
    case "pty":
      if (rest.length === 0) return readEnvelope(uri, await call(kernel, "pty.list", {}), "self");
      arity(1);
      return readEnvelope(
        uri,
        await call(kernel, "pty.read", { pty_id: shortRef("pty", rest[0]) }),
        "self",
      );
    case "jobs":
      arity(0);
      return readEnvelope(uri, await call(kernel, "task.list", {}), "self");
    case "journal":
      arity(0);
      return readEnvelope(uri, await call(kernel, "journal.query", journalQuery(q)), "self");
    case "events": {
      arity(1);
      const params = defined({
        channel: rest[0],
        since: intParam(q, "since", -1),
        limit: intParam(q, "limit", 1),
      });
      // A user.* payload is shown exactly as published (§9.2), as its push forwards it (M-SUB-3).
      return readEnvelope(uri, await call(kernel, "events.read", params, true), "self");
    }
    default:
      throw unknownResource(uri);
  }
}

function journalQuery(q: Map<string, string>): Record<string, unknown> {
  return defined({
    since: intParam(q, "since", null),
    until: intParam(q, "until", null),
    head: stringParam(q, "head"),
    principal: stringParam(q, "principal"),
    ok: boolParam(q, "ok"),
    effects: listParam(q, "effects"),
    limit: intParam(q, "limit", 1),
  });
}

async function readTaskOutput(
  kernel: KernelClient,
  uri: string,
  id: string,
  q: Map<string, string>,
): Promise<ReadResult> {
  const task = shortRef("task", id);
  if (q.has("stream") || q.has("cursor") || q.has("max_bytes")) {
    const params = defined({
      task,
      stream: enumParam(q, "stream", ["stdout", "stderr"]),
      cursor: intParam(q, "cursor", 0),
      max_bytes: intParam(q, "max_bytes", 1),
    });
    return readEnvelope(uri, await call(kernel, "task.output", params), "self");
  }
  const selection = valueQuery(q);
  const record = await call(kernel, "task.get", { task });
  if (isObject(record) && typeof record.result_ref === "string") {
    const r = await call(kernel, "value.get", { ref: record.result_ref, ...selection });
    return readEnvelope(uri, r, "value");
  }
  return readEnvelope(uri, record, "self");
}

/** The live cwd; a kernel without `session.cwd` (-32601) gets the attach-time cwd (M-RES-4). */
async function sessionCwd(kernel: KernelClient): Promise<unknown> {
  try {
    return await kernel.request("session.cwd", {});
  } catch (e) {
    if (e instanceof RpcError && !(e instanceof BridgeError)) {
      if (e.code === ErrorCode.METHOD_NOT_FOUND) return { cwd: kernel.attachment?.cwd ?? null };
      throw invalidParams(`kernel error: ${e.message}`, e.toObject());
    }
    throw e;
  }
}
