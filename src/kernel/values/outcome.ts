import { detached } from "../../protocol/detached.ts";
import { utf8Decoder } from "../../protocol/utf8.ts";
import {
  INLINE_VALUE_LIMIT,
  JSON_PARSE_LIMIT,
  OUTCOME_CMD_SCALARS,
} from "../../protocol/limits.ts";
import type { Captured } from "../store/blob_info.ts";
import type { Cas } from "../store/cas.ts";
import { BlobValue } from "./blob_value.ts";
import { scalarCount, scalarSlice } from "./js_string.ts";
import { parseJsonValue } from "./json_value.ts";
import { Outcome, type Value } from "./value.ts";

const decoder = utf8Decoder();

/** What the exec layer knows when bash and both pipes are done (K-BASH-9). */
export interface OutcomeInput {
  status: number | null;
  signal: string | null;
  out: Captured;
  err: Captured;
  dur_ns: number;
  pid: number;
  cmd: string;
  /** Destinations the proxy refused during the exec (P-NET-2). */
  netRefused?: readonly string[];
}

/** Stdout as a value (K-BASH-10): one JSON text of at most 16 MiB → V-JSON-1, else str, else bytes. */
export function stdoutValue(cas: Cas, captured: Captured): Value {
  return convertStdout(cas, captured).value;
}

/** Stderr as a value: str when valid UTF-8, else bytes (K-BASH-10 rules 2 and 3). */
export function stderrValue(cas: Cas, captured: Captured): Value {
  return streamValue(cas, captured);
}

/**
 * The outcome record of an exec (K-BASH-9), with the raw streams kept for `.stdout`/`.stderr`;
 * `cmd` is the source as shown, when cut already.
 */
export function outcomeValue(
  cas: Cas,
  input: OutcomeInput,
  cmd = commandText(input.cmd),
): Outcome {
  const out = convertStdout(cas, input.out);
  return new Outcome(
    input.status,
    input.signal,
    out.value,
    stderrValue(cas, input.err),
    out.raw,
    input.dur_ns,
    input.pid,
    cmd,
    input.out.blob.truncated || input.err.blob.truncated,
    input.netRefused ?? [],
  );
}

/**
 * The `cmd` shown for a source (K-BASH-9): cut to 256 scalars with a trailing `…` when longer.
 * Task records use it too, so that listing tasks stays small whatever their sources (W-RPC-5).
 * A cut one is a string of its own: a view of the source kept all of it alive in each retained
 * task and outcome (a background task of a 2 MB source held 2 MB).
 */
export function commandText(src: string): string {
  return scalarCount(src) > OUTCOME_CMD_SCALARS
    ? detached(scalarSlice(src, 0, OUTCOME_CMD_SCALARS) + "…")
    : src;
}

function convertStdout(cas: Cas, captured: Captured): { value: Value; raw: Value } {
  const { blob, bytes } = captured;
  if (bytes && blob.utf8 && blob.len <= JSON_PARSE_LIMIT && mayBeJson(bytes)) {
    const text = decoder.decode(bytes);
    const parsed = parseJsonValue(text);
    const raw = blob.len <= INLINE_VALUE_LIMIT ? text : BlobValue.whole(cas, blob);
    return { value: parsed ? parsed.value : raw, raw };
  }
  const raw = streamValue(cas, captured);
  return { value: raw, raw };
}

function streamValue(cas: Cas, { blob, bytes }: Captured): Value {
  if (bytes === null || blob.len > INLINE_VALUE_LIMIT) return BlobValue.whole(cas, blob);
  return blob.utf8 ? decoder.decode(bytes) : bytes.slice();
}

/** Whether the first byte after ASCII whitespace can start a JSON text. */
function mayBeJson(bytes: Uint8Array): boolean {
  for (const b of bytes) {
    if (b === 0x20 || b === 0x09 || b === 0x0a || b === 0x0d) continue;
    return b === 0x7b || b === 0x5b || b === 0x22 || b === 0x2d || (b >= 0x30 && b <= 0x39) ||
      b === 0x74 || b === 0x66 || b === 0x6e;
  }
  return false;
}
