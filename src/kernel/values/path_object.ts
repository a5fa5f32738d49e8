import { utf8Decoder } from "../../protocol/utf8.ts";
/** A path outside values: display text, plus base64 `raw` only when not UTF-8 (V-TAG-3). */
export interface PathObject {
  display: string;
  raw?: string;
}

const strictUtf8 = utf8Decoder(true);
const lossyUtf8 = utf8Decoder();

const encoder = new TextEncoder();

/** The V-TAG-3 path object for a path given as text or raw bytes. */
export function pathObject(path: string | Uint8Array): PathObject {
  const bytes = typeof path === "string" ? encoder.encode(path) : path;
  try {
    return { display: strictUtf8.decode(bytes) };
  } catch {
    return {
      display: lossyUtf8.decode(bytes),
      raw: btoa(String.fromCharCode(...bytes)),
    };
  }
}
