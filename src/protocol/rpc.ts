import { ErrorCode, type RpcErrorObject } from "./errors.ts";
import { nestsDeeper } from "./json_depth.ts";
import { ID_NESTING_LIMIT, NESTING_LIMIT } from "./limits.ts";
import { memberSource } from "./member_source.ts";
import type { RawJSON } from "./raw_json.ts";

/**
 * A request id as echoed on the wire. Kernel ids keep their exact JSON text: primitives as
 * {@link RawJSON}, objects and arrays as copies whose numbers and strings are RawJSON (W-RPC-2).
 */
export type RpcId =
  | string
  | number
  | boolean
  | null
  | RawJSON
  | readonly unknown[]
  | { readonly [member: string]: unknown };

/** A decoded incoming frame. */
export type Incoming =
  | { kind: "request"; id: RpcId; method: string; params: Record<string, unknown> }
  | { kind: "notification"; method: string; params: Record<string, unknown> }
  | { kind: "response"; id: RpcId; result?: unknown; error?: RpcErrorObject }
  | { kind: "invalid"; id: RpcId; error: RpcErrorObject };

/** Which id rule applies: the kernel echoes any JSON id verbatim, MCP allows strings and safe integers. */
export type IdRule = "verbatim" | "mcp";

const strictUtf8 = new TextDecoder("utf-8", { fatal: true });
const utf8 = new TextDecoder();

/**
 * `bytes` as UTF-8 text; throws a TypeError if they are not UTF-8. The lenient decoder is the
 * runtime's fast path; only a text with U+FFFD in it, which the input may hold or the lenient
 * decoder may have put in place of bad bytes, is decoded again strictly to tell which.
 */
function decodeUtf8(bytes: Uint8Array): string {
  const text = utf8.decode(bytes);
  return text.includes("\uFFFD") ? strictUtf8.decode(bytes) : text;
}

function invalid(id: RpcId, code: number, message: string, data?: unknown): Incoming {
  const error: RpcErrorObject = data === undefined ? { code, message } : { code, message, data };
  return { kind: "invalid", id, error };
}

/** Source texts of parsed primitives that would not re-serialize to the same text, by holder and key. */
type SourceTexts = WeakMap<object, Map<string, string>>;

/** A copy of member `key` of `holder` that `JSON.stringify` writes as its source text (W-RPC-2). */
function verbatim(holder: object, key: string, sources: SourceTexts): RpcId {
  const v = (holder as Record<string, unknown>)[key];
  const source = sources.get(holder)?.get(key);
  if (source !== undefined) return JSON.rawJSON(source);
  if (Array.isArray(v)) return v.map((_, i) => verbatim(v, String(i), sources));
  if (isPlainObject(v)) {
    return Object.fromEntries(Object.keys(v).map((k) => [k, verbatim(v, k, sources)]));
  }
  return v as RpcId;
}

/**
 * The id written as `source`, as a value `JSON.stringify` writes back as that same text
 * (`1152921504606846977`, `1.50`, `"\u0041"`); null when it nests deeper than
 * {@link ID_NESTING_LIMIT} levels (or too deeply to copy).
 */
function verbatimId(source: string): RpcId | null {
  const nests = source.startsWith("[") || source.startsWith("{");
  if (nests && nestsDeeper(encoder.encode(source), ID_NESTING_LIMIT)) return null;
  try {
    // Wrapped in an array so that the id itself has a holder to record its source under.
    const { value, sources } = parseKeepingSources(`[${source}]`);
    return verbatim(value as object, "0", sources);
  } catch {
    return null; // RangeError: the reviver and the copy recurse once per level
  }
}

/** `text` parsed, with the source texts of its primitives that would not re-serialize as such. */
function parseKeepingSources(text: string): { value: unknown; sources: SourceTexts } {
  const sources: SourceTexts = new WeakMap();
  const value = JSON.parse(
    text,
    function (this: object, key: string, v: unknown, context?: { source?: string }) {
      const source = context?.source;
      if (source !== undefined && source !== JSON.stringify(v)) {
        let byKey = sources.get(this);
        if (!byKey) sources.set(this, byKey = new Map());
        byKey.set(key, source);
      }
      return v;
    } as (key: string, value: unknown) => unknown,
  );
  return { value, sources };
}

/**
 * The params member of each method whose numbers are kept exactly as written: a `user.*` payload
 * is "exactly the published payload" (§9.2), as the kernel takes it and as a facade forwards its
 * push, and the kernel writes every integer exactly (W-NUM-1).
 */
const EXACT_MEMBERS: ReadonlyMap<string, string> = new Map([
  ["events.publish", "payload"],
  ["event", "payload"],
]);

/** Most values {@link roundsNumbers} looks at: more than any payload of 64 KiB holds. */
const EXACT_NODE_LIMIT = 65536;

/**
 * Whether `value` holds a number that JSON.parse may have changed: an integer past 2^53, one past
 * the double range (Infinity) or -0. False for more than `budget` values (by default {@link
 * EXACT_NODE_LIMIT}: a
 * payload that large is refused for its size anyway), so that the source-keeping parse of
 * {@link exactParams} never walks more than that.
 */
function roundsNumbers(value: unknown, budget = EXACT_NODE_LIMIT): boolean {
  const stack = [value];
  let rounds = false;
  while (stack.length > 0) {
    const v = stack.pop();
    if (typeof v === "number") {
      if (!Number.isSafeInteger(v) && (Number.isInteger(v) || !Number.isFinite(v))) rounds = true;
      if (Object.is(v, -0)) rounds = true;
    } else if (typeof v === "object" && v !== null) {
      for (const key in v) {
        if (--budget < 0) return false;
        stack.push((v as Record<string, unknown>)[key]);
      }
    }
  }
  return rounds;
}

/**
 * The `result` decoded from the response frame `bytes`, parsed again from its source text with
 * every number JSON.parse changed as RawJSON of its source, when it holds one; else `result`
 * itself. For a reply that shows a `user.*` payload, "exactly the published payload" (§9.2),
 * whatever its size: its numbers are looked at all, and only its text is parsed again.
 */
export function exactResult(bytes: Uint8Array, result: unknown): unknown {
  if (!roundsNumbers(result, Infinity)) return result;
  let source: string | undefined;
  try {
    source = memberSource(decodeUtf8(bytes), "result");
  } catch {
    return result; // not UTF-8: it would not have decoded
  }
  if (source === undefined) return result;
  try {
    const { value, sources } = parseKeepingSources(`[${source}]`);
    return verbatim(value as object, "0", sources);
  } catch {
    return result; // RangeError: the reviver and the copy recurse once per level
  }
}

/**
 * `params` with its {@link EXACT_MEMBERS} member, when that holds a number JSON.parse changed,
 * parsed again from its own source text in `text` with such numbers as RawJSON of their source;
 * else `params` itself. Only that member's text is parsed again, not the frame's other members.
 */
function exactParams(
  method: string,
  params: Record<string, unknown>,
  text: string,
): Record<string, unknown> {
  const member = EXACT_MEMBERS.get(method);
  if (member === undefined || !roundsNumbers(params[member])) return params;
  const paramsSource = memberSource(text, "params");
  const source = paramsSource === undefined ? undefined : memberSource(paramsSource, member);
  if (source === undefined) return params;
  try {
    // Wrapped in an array so that the member has a holder to record its source under.
    const { value, sources } = parseKeepingSources(`[${source}]`);
    return { ...params, [member]: verbatim(value as object, "0", sources) };
  } catch {
    return params; // RangeError: the reviver and the copy recurse once per level
  }
}

/**
 * The id `raw`, written as `source`, as it is echoed under `rule`: any JSON (W-RPC-2) or an MCP
 * string or integer (an integer written as `1.0` or `1e3` is not one); undefined when refused.
 */
function acceptedId(raw: unknown, source: string, rule: IdRule): RpcId | undefined {
  if (rule === "verbatim") {
    // The usual ids already write back as their source: a number as JS writes it, a string
    // without escapes. Only others need the source-keeping parse.
    const same = typeof raw === "number"
      ? String(raw) === source
      : typeof raw === "string" && !source.includes("\\");
    return same ? raw as string | number : verbatimId(source) ?? undefined;
  }
  const integer = typeof raw === "number" && Number.isSafeInteger(raw) &&
    source === JSON.stringify(raw);
  return typeof raw === "string" || integer ? raw as string | number : undefined;
}

/**
 * The id of a frame refused unparsed, so that even a request nested too deeply is answered under
 * its own id (M-IN-1): a string or number id found among its top-level members, else null.
 */
function unparsedId(bytes: Uint8Array, rule: IdRule): RpcId {
  let source: string | undefined;
  try {
    source = memberSource(decodeUtf8(bytes), "id");
  } catch {
    return null; // not UTF-8
  }
  if (source === undefined || !/^("|-?[0-9])/.test(source)) return null;
  try {
    return acceptedId(JSON.parse(source), source, rule) ?? null;
  } catch {
    return null;
  }
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** The W-FRAME-6 answer to a frame that is not UTF-8 JSON. */
function parseError(e: unknown): Incoming {
  return invalid(null, ErrorCode.RPC_PARSE_ERROR, "parse error", {
    detail: e instanceof Error ? e.message : String(e),
  });
}

/**
 * Decodes one frame into a request, notification, response, or an error to send back
 * (W-FRAME-6/7, W-RPC-1/2); a frame nesting deeper than `nesting` levels is refused.
 */
export function decodeFrame(
  bytes: Uint8Array,
  rule: IdRule,
  nesting: number = NESTING_LIMIT,
): Incoming {
  // A plain parse copes with any nesting up to the limit; only the id needs its source text
  // (W-RPC-2, M-IN-1). Deeper frames are refused undecoded: neither a string nor objects are
  // built for them (issue 13).
  let text: string;
  let msg: unknown;
  // A frame of n bytes opens at most n arrays or objects: a shorter one (any event or reply
  // of usual size) is not scanned.
  if (bytes.length > nesting && nestsDeeper(bytes, nesting)) {
    return invalid(
      unparsedId(bytes, rule),
      ErrorCode.INVALID_REQUEST,
      `invalid request: arrays and objects nest deeper than ${nesting} levels`,
    );
  }
  try {
    text = decodeUtf8(bytes);
  } catch (e) {
    return parseError(e);
  }
  try {
    msg = JSON.parse(text);
  } catch (e) {
    return parseError(e);
  }
  if (!isPlainObject(msg)) {
    return invalid(null, ErrorCode.INVALID_REQUEST, "invalid request: frame is not a JSON object");
  }
  const hasId = Object.hasOwn(msg, "id");
  let id: RpcId = null;
  if (hasId) {
    const raw = msg.id;
    const source = memberSource(text, "id") as string;
    // An error response to a frame the peer could not read carries id null (W-FRAME-4/6).
    const copy = raw === null && rule === "mcp"
      ? (!Object.hasOwn(msg, "method") && Object.hasOwn(msg, "error") ? null : undefined)
      : acceptedId(raw, source, rule);
    if (copy === undefined) {
      return invalid(null, ErrorCode.INVALID_REQUEST, "invalid request: bad id");
    }
    id = copy;
  }
  if (msg.jsonrpc !== "2.0") {
    return invalid(id, ErrorCode.INVALID_REQUEST, 'invalid request: jsonrpc must be "2.0"');
  }
  if (!Object.hasOwn(msg, "method")) {
    if (hasId && (Object.hasOwn(msg, "result") || Object.hasOwn(msg, "error"))) {
      return {
        kind: "response",
        id,
        result: msg.result,
        error: msg.error as RpcErrorObject | undefined,
      };
    }
    return invalid(id, ErrorCode.INVALID_REQUEST, "invalid request: missing method");
  }
  if (typeof msg.method !== "string") {
    return invalid(id, ErrorCode.INVALID_REQUEST, "invalid request: method must be a string");
  }
  let params: Record<string, unknown> = {};
  if (msg.params !== undefined && msg.params !== null) {
    if (!isPlainObject(msg.params)) {
      if (!hasId) return { kind: "notification", method: msg.method, params: {} };
      return invalid(id, ErrorCode.INVALID_PARAMS, "invalid params: params must be an object");
    }
    params = exactParams(msg.method, msg.params, text);
  }
  if (!hasId) return { kind: "notification", method: msg.method, params };
  return { kind: "request", id, method: msg.method, params };
}

/** JSON replacer that writes bigints as exact integers (W-NUM-1). */
function exactIntegers(_key: string, value: unknown): unknown {
  return typeof value === "bigint" ? JSON.rawJSON(value.toString()) : value;
}

const encoder = new TextEncoder();

/**
 * A JSON value already encoded as compact JSON text, written verbatim where it stands in a
 * message: lets a large value built off the event loop (an AST, E-4) be sent without rebuilding it.
 */
export class JsonText {
  constructor(readonly text: string) {}
}

/** Encodes a message as one compact frame terminated by a newline. */
export function encodeFrame(message: unknown): Uint8Array {
  return encoder.encode(compactJson(message) + "\n");
}

/** Compact JSON text with exact bigints and {@link JsonText} values in place, without the newline. */
export function compactJson(value: unknown): string {
  const texts: string[] = [];
  // Drawn once a JsonText is met: most messages hold none.
  let marker = "";
  const json = JSON.stringify(value, (key, v) => {
    if (!(v instanceof JsonText)) return exactIntegers(key, v);
    marker ||= `@jsontext-${crypto.randomUUID()}-`;
    texts.push(v.text);
    return `${marker}${texts.length - 1}`;
  });
  if (texts.length === 0) return json;
  return json.replace(new RegExp(`"${marker}(\\d+)"`, "g"), (_, i) => texts[Number(i)]);
}

/** A success response envelope. */
export function resultMessage(id: RpcId, result: unknown): unknown {
  return { jsonrpc: "2.0", id, result: result === undefined ? null : result };
}

/** An error response envelope. */
export function errorMessage(id: RpcId, error: RpcErrorObject): unknown {
  return { jsonrpc: "2.0", id, error };
}

/** The reply to an oversize frame (W-FRAME-4/5). */
export const OVERSIZE_ERROR: RpcErrorObject = {
  code: ErrorCode.INVALID_REQUEST,
  message: "frame exceeds 16 MiB",
};
