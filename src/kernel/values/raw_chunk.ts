import { BlobValue } from "./blob_value.ts";
import { base64 } from "./chunk.ts";
import { isHighSurrogate, utf8Decoder } from "../../protocol/utf8.ts";
import { badPath } from "./path.ts";
import type { Value } from "./value.ts";

/** One bounded raw chunk of a str (`raw`) or bytes (`raw_base64`) value (K-VAL-4). */
export type RawChunk =
  & ({ raw: string } | { raw_base64: string })
  & { offset: number; len: number; total: number; next: number | null };

const decoder = utf8Decoder();

/**
 * Bytes `[offset, offset + size)` of the UTF-8 encoding of a str, or of a bytes value, read
 * without loading the whole payload. For str, `offset` inside a character → -32005 and the end
 * moves back to a character boundary. `offset > total` or another type → -32005.
 */
export async function rawChunk(
  v: Value,
  offset: number,
  size: number,
  ref: string,
  path: string | null,
): Promise<RawChunk> {
  const beyond = (total: number) => {
    if (offset > total) throw badPath(`offset ${offset} is beyond the end (${total})`, ref, path);
  };
  const midChar = () => badPath(`offset ${offset} is inside a UTF-8 sequence`, ref, path);
  const chunk = (total: number, len: number) => {
    const end = offset + len;
    return { offset, len, total, next: end < total ? end : null };
  };
  if (typeof v === "string") {
    const head = wholeChars(v, 0, offset);
    const total = head.bytes + wholeChars(v, head.units, Infinity).bytes;
    beyond(total);
    if (head.bytes !== offset) throw midChar();
    const body = wholeChars(v, head.units, size);
    return { raw: v.slice(head.units, head.units + body.units), ...chunk(total, body.bytes) };
  }
  if (v instanceof Uint8Array) {
    beyond(v.length);
    const bytes = v.subarray(offset, offset + size);
    return { raw_base64: base64(bytes), ...chunk(v.length, bytes.length) };
  }
  if (v instanceof BlobValue) {
    beyond(v.len);
    if (v.kind === "bytes") {
      const bytes = await v.read(offset, size);
      return { raw_base64: base64(bytes), ...chunk(v.len, bytes.length) };
    }
    // One byte more than the chunk tells whether the chunk ends inside a character.
    const bytes = await v.read(offset, size + 1);
    if (bytes.length > 0 && isContinuation(bytes[0])) throw midChar();
    let end = Math.min(size, bytes.length);
    while (end > 0 && end < bytes.length && isContinuation(bytes[end])) end--;
    return { raw: decoder.decode(bytes.subarray(0, end)), ...chunk(v.len, end) };
  }
  throw badPath("raw applies only to str and bytes values", ref, path);
}

const encoder = new TextEncoder();
/** Where {@link wholeChars} encodes, a piece at a time. */
const scratch = new Uint8Array(64 * 1024);

/**
 * From code unit `from` of `s`, the code units and UTF-8 bytes of the longest run of whole
 * characters whose encoding takes at most `limit` bytes (a lone surrogate counts as U+FFFD's 3).
 * Encoded natively a piece at a time: a walk of the code units in JS from the start took up to
 * 83 ms a chunk of a 14 MB str, on the event loop for every page (E-4).
 */
function wholeChars(s: string, from: number, limit: number): { units: number; bytes: number } {
  let units = 0, bytes = 0;
  while (bytes < limit && from + units < s.length) {
    const room = Math.min(scratch.length, limit - bytes);
    // at most `room` code units fit; a surrogate pair is never split between two pieces
    let end = Math.min(s.length, from + units + room);
    if (end < s.length && isHighSurrogate(s.charCodeAt(end - 1))) end--;
    const { read, written } = encoder.encodeInto(
      s.slice(from + units, end),
      scratch.subarray(0, room),
    );
    if (read === 0) break; // the next character does not fit
    units += read;
    bytes += written;
  }
  return { units, bytes };
}

function isContinuation(b: number): boolean {
  return (b & 0xc0) === 0x80;
}
