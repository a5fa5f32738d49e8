import { ErrorCode, RpcError } from "../../protocol/errors.ts";
import { encodeChunk } from "./chunk.ts";
import type { BlobGetParams } from "./params.ts";
import { type Cas, parseHash } from "../store/cas.ts";

/** The result of `blob.get` (K-BLOB-2). */
export interface BlobGetResult {
  hash: string;
  len: number;
  offset: number;
  next: number | null;
  value: { $: "str" | "bytes"; v: string };
}

/** `blob.get`: one bounded chunk of a CAS blob, never interpreted as JSON (K-BLOB-1..3). */
export async function blobGet(cas: Cas, params: BlobGetParams): Promise<BlobGetResult> {
  const hash = "sha256:" + parseHash(params.hash);
  const len = await cas.size(hash);
  if (len === null) throw new RpcError(ErrorCode.UNKNOWN_REF, "unknown blob", { hash });
  const { offset, length } = params;
  if (offset > len) {
    throw new RpcError(ErrorCode.BAD_PATH_OR_SLICE, "offset is beyond the end of the blob", {
      hash,
      offset,
      len,
    });
  }
  const chunk = encodeChunk(await cas.readRange(hash, offset, length));
  const end = offset + chunk.len;
  return {
    hash,
    len,
    offset,
    next: end < len ? end : null,
    value: { $: chunk.encoding === "utf8" ? "str" : "bytes", v: chunk.data },
  };
}
