import { canonicalEnd, holdsAt, jsonNumberEnd } from "./canonical_json.ts";

const encoder = new TextEncoder();
const bytesOf = (text: string) => encoder.encode(text);

/** How the kernel writes an `event` push up to its channel (K-EVT-3/5). */
const HEAD = bytesOf('{"jsonrpc":"2.0","method":"event","params":{"channel":');
const SEQ = bytesOf(',"seq":');
const TS = bytesOf(',"ts":');
const PAYLOAD = bytesOf(',"payload":');
const TAIL = bytesOf("}}");
/** Levels of the frame around the payload: the message and its params. */
const ENVELOPE_LEVELS = 2;

/** The values of a kernel `event` push that a forwarder copies, as views of the frame's bytes. */
export interface EventValues {
  seq: Uint8Array;
  payload: Uint8Array;
}

/**
 * The `seq` and `payload` of `frame` (without its newline) when it is an `event` push exactly as
 * the kernel writes it, `seq` a scalar and `ts` a number, both values copied written as
 * `JSON.stringify` writes back what `JSON.parse` reads from them and the frame nesting at most
 * `nesting` levels; else null, and the frame is left to the general decoder (which also rejects
 * what is not JSON). The views are valid as long as `frame` is.
 */
export function eventValues(frame: Uint8Array, nesting: number): EventValues | null {
  let at = expect(frame, 0, HEAD);
  if (at < 0) return null;
  at = expect(frame, canonicalEnd(frame, at, 0), SEQ);
  if (at < 0) return null;
  const seqEnd = canonicalEnd(frame, at, 0);
  const seq = frame.subarray(at, seqEnd);
  at = expect(frame, seqEnd, TS);
  if (at < 0) return null;
  // ts is not copied: any JSON number will do (the kernel writes it exactly, W-NUM-1).
  at = expect(frame, jsonNumberEnd(frame, at), PAYLOAD);
  if (at < 0) return null;
  const payloadEnd = canonicalEnd(frame, at, nesting - ENVELOPE_LEVELS);
  if (expect(frame, payloadEnd, TAIL) !== frame.length) return null;
  return { seq, payload: frame.subarray(at, payloadEnd) };
}

/** Index after `word` if `frame` holds it at `at` (-1 stays -1), else -1. */
function expect(frame: Uint8Array, at: number, word: Uint8Array): number {
  return at >= 0 && at + word.length <= frame.length && holdsAt(frame, at, word)
    ? at + word.length
    : -1;
}
