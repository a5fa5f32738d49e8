import { utf8Decoder } from "../../protocol/utf8.ts";
import { Buffer } from "node:buffer";
import { Utf8Scanner } from "../store/utf8_scanner.ts";

/** A byte range encoded by V-CHUNK-1; `len` is how many bytes of the range it covers. */
export type EncodedChunk =
  | { encoding: "utf8"; data: string; len: number }
  | { encoding: "base64"; data: string; len: number };

const decoder = utf8Decoder();

/**
 * Encodes a requested byte range C (V-CHUNK-1): UTF-8 text when C is valid; text over C minus a
 * trailing incomplete sequence when that is all that is wrong and something remains; else base64
 * of all of C.
 */
export function encodeChunk(c: Uint8Array): EncodedChunk {
  const scanner = new Utf8Scanner();
  scanner.push(c);
  if (scanner.complete) return { encoding: "utf8", data: decoder.decode(c), len: c.length };
  const keep = c.length - scanner.pending;
  if (scanner.valid && keep > 0) {
    return { encoding: "utf8", data: decoder.decode(c.subarray(0, keep)), len: keep };
  }
  return { encoding: "base64", data: base64(c), len: c.length };
}

/** Standard padded base64 of some bytes. */
export function base64(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length).toString("base64");
}
