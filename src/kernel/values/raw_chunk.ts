import { BlobValue } from "./blob_value.ts";
import { base64 } from "./chunk.ts";
import { utf8Decoder, utf8Length } from "../../protocol/utf8.ts";
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
    const total = utf8Length(v);
    beyond(total);
    let i = 0, pos = 0;
    while (pos < offset) [i, pos] = nextChar(v, i, pos);
    if (pos !== offset) throw midChar();
    let j = i, end = pos;
    while (j < v.length) {
      const [k, after] = nextChar(v, j, end);
      if (after > offset + size) break;
      [j, end] = [k, after];
    }
    return { raw: v.slice(i, j), ...chunk(total, end - offset) };
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

/** The code unit index and UTF-8 byte position after the character at `i`. */
function nextChar(s: string, i: number, pos: number): [number, number] {
  const c = s.charCodeAt(i);
  if (c < 0x80) return [i + 1, pos + 1];
  if (c < 0x800) return [i + 1, pos + 2];
  if (c >= 0xd800 && c <= 0xdbff) {
    const d = s.charCodeAt(i + 1);
    if (d >= 0xdc00 && d <= 0xdfff) return [i + 2, pos + 4];
  }
  return [i + 1, pos + 3];
}

function isContinuation(b: number): boolean {
  return (b & 0xc0) === 0x80;
}
