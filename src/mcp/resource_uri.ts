import { cutUtf8, utf8Decoder } from "../protocol/utf8.ts";
import { invalidParams, type RpcError } from "../protocol/errors.ts";
import { nestsDeeper } from "../protocol/json_depth.ts";
import { VALUE_NESTING_LIMIT } from "../protocol/limits.ts";

/** The URI scheme of every shoal resource. */
export const SCHEME = "shoal://";

/** A `shoal://` URI split into decoded path segments and query parameters (M-RES-3). */
export interface ResourceUri {
  segments: string[];
  query: Map<string, string>;
}

const utf8 = utf8Decoder(true);

/** Length of the UTF-8 sequence a lead byte starts (0 for a byte that cannot start one). */
function sequenceLength(lead: number): number {
  if (lead < 0x80) return 1;
  if (lead >= 0xc2 && lead <= 0xdf) return 2;
  if (lead >= 0xe0 && lead <= 0xef) return 3;
  if (lead >= 0xf0 && lead <= 0xf4) return 4;
  return 0;
}

/** The valid UTF-8 sequence starting at `at` decoded, or null when none starts there. */
function decodeSequence(bytes: Uint8Array, at: number): string | null {
  const n = sequenceLength(bytes[at]);
  if (n === 0 || at + n > bytes.length) return null;
  try {
    return utf8.decode(bytes.subarray(at, at + n));
  } catch {
    return null; // a bad continuation, overlong form, surrogate or code point beyond U+10FFFF
  }
}

/**
 * Percent-decodes UTF-8 (M-RES-3): every escaped byte that belongs to a valid UTF-8 sequence is
 * decoded; an escape of any other byte, and a malformed escape, stays literal.
 */
export function percentDecode(text: string): string {
  return text.replace(/(?:%[0-9A-Fa-f]{2})+/g, (run) => {
    const bytes = new Uint8Array(run.length / 3);
    for (let i = 0; i < bytes.length; i++) bytes[i] = parseInt(run.slice(3 * i + 1, 3 * i + 3), 16);
    let out = "";
    let at = 0;
    while (at < bytes.length) {
      const decoded = decodeSequence(bytes, at);
      if (decoded === null) {
        out += run.slice(3 * at, 3 * at + 3);
        at += 1;
      } else {
        out += decoded;
        at += sequenceLength(bytes[at]);
      }
    }
    return out;
  });
}

/** Most UTF-8 bytes of a client's URI, query value or argument name an error message quotes. */
export const QUOTED_INPUT_BYTES = 256;

/**
 * What a client sent, as an error message quotes it: cut to {@link QUOTED_INPUT_BYTES} with `…`,
 * so a megabyte URI or name does not come back as a megabyte message (the client has it).
 */
export function quotedInput(text: string): string {
  return cutUtf8(text, QUOTED_INPUT_BYTES);
}

/** Parses a resource URI by the M-RES-3 rules; anything not starting with `shoal://` → `-32602`. */
export function parseResourceUri(uri: string): ResourceUri {
  if (!uri.startsWith(SCHEME)) throw invalidParams(`not a shoal:// uri: ${quotedInput(uri)}`);
  let rest = uri.slice(SCHEME.length);
  const hash = rest.indexOf("#");
  if (hash !== -1) rest = rest.slice(0, hash);
  const q = rest.indexOf("?");
  const path = q === -1 ? rest : rest.slice(0, q);
  const segments = path.split("/").filter((s) => s !== "").map(percentDecode);
  const query = new Map<string, string>();
  if (q !== -1) {
    for (const pair of rest.slice(q + 1).split("&")) {
      if (pair === "") continue;
      const eq = pair.indexOf("=");
      const key = percentDecode(eq === -1 ? pair : pair.slice(0, eq));
      query.set(key, eq === -1 ? "" : percentDecode(pair.slice(eq + 1)));
    }
  }
  return { segments, query };
}

function badParam(name: string, detail: string): RpcError {
  return invalidParams(`invalid query parameter ${name}: ${detail}`, { parameter: name });
}

/** An integer query parameter no smaller than `min` (a bigint beyond ±2^53−1, sent exactly). */
export function intParam(
  query: Map<string, string>,
  name: string,
  min: number | null,
): number | bigint | undefined {
  const text = query.get(name);
  if (text === undefined) return undefined;
  if (!/^-?[0-9]+$/.test(text)) {
    throw badParam(name, `expected an integer, got "${quotedInput(text)}"`);
  }
  const big = BigInt(text);
  if (min !== null && big < BigInt(min)) throw badParam(name, `must be >= ${min}`);
  const n = Number(big);
  return Number.isSafeInteger(n) ? n : big;
}

/** A string query parameter as given. */
export function stringParam(query: Map<string, string>, name: string): string | undefined {
  return query.get(name);
}

/** `slice=a..b` with non-negative integers → `[a, b]` (V-SLICE-1). */
export function sliceParam(query: Map<string, string>): [number, number] | undefined {
  const text = query.get("slice");
  if (text === undefined) return undefined;
  const m = /^([0-9]+)\.\.([0-9]+)$/.exec(text);
  if (!m) {
    throw badParam("slice", `expected a..b with non-negative integers, got "${quotedInput(text)}"`);
  }
  const [a, b] = [Number(m[1]), Number(m[2])];
  if (!Number.isSafeInteger(a) || !Number.isSafeInteger(b)) throw badParam("slice", "too large");
  return [a, b];
}

/** One of the listed words. */
export function enumParam(
  query: Map<string, string>,
  name: string,
  words: readonly string[],
): string | undefined {
  const text = query.get(name);
  if (text === undefined) return undefined;
  if (!words.includes(text)) throw badParam(name, `expected one of ${words.join(", ")}`);
  return text;
}

/** `true` or `false`. */
export function boolParam(query: Map<string, string>, name: string): boolean | undefined {
  const text = enumParam(query, name, ["true", "false"]);
  return text === undefined ? undefined : text === "true";
}

/** A comma-separated list (empty items dropped). */
export function listParam(query: Map<string, string>, name: string): string[] | undefined {
  const text = query.get(name);
  return text === undefined ? undefined : text.split(",").filter((s) => s !== "");
}

/** A JSON object given percent-encoded (the unadvertised `elide`), nested as a value may be. */
export function jsonObjectParam(
  query: Map<string, string>,
  name: string,
): Record<string, unknown> | undefined {
  const text = query.get(name);
  if (text === undefined) return undefined;
  if (nestsDeeper(new TextEncoder().encode(text), VALUE_NESTING_LIMIT)) {
    throw badParam(name, `nested more than ${VALUE_NESTING_LIMIT} levels`);
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw badParam(name, "expected a JSON object");
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw badParam(name, "expected a JSON object");
  }
  return value as Record<string, unknown>;
}
