import { BlobValue } from "./blob_value.ts";
import { scalarCount, scalarSlice } from "./js_string.ts";
import { badPath } from "./path.ts";
import { isList, listLength, listSlice, Table, type Value } from "./value.ts";

/**
 * Applies `slice: [a, b]` (V-SLICE-1): lists by item, tables by row, str by scalar, bytes by
 * byte, half-open and clamped. CAS-backed str/bytes are sliced by streaming, never loaded whole.
 * Any other type → -32005 with `{ref, path}`.
 */
export async function sliceValue(
  v: Value,
  a: number,
  b: number,
  ref: string,
  path: string | null,
): Promise<Value> {
  const clamp = (len: number): [number, number] => {
    const from = Math.min(a, len);
    return [from, Math.max(from, Math.min(b, len))];
  };
  if (isList(v)) return listSlice(v, ...clamp(listLength(v)));
  if (v instanceof Table) return v.slice(...clamp(v.n));
  if (typeof v === "string") {
    const [from, to] = clamp(scalarCount(v));
    return scalarSlice(v, from, to);
  }
  if (v instanceof Uint8Array) return v.slice(...clamp(v.length));
  if (v instanceof BlobValue) {
    return v.kind === "str"
      ? await v.scalarRange(...clamp(v.scalars))
      : await v.byteRange(...clamp(v.len));
  }
  throw badPath("slice applies only to list, table, str and bytes values", ref, path);
}
