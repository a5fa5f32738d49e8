import { outUri } from "../../../protocol/refs.ts";
import { attached, type MethodSpec } from "../method.ts";
import { blobGet } from "../../values/blob_get.ts";
import { valueGet } from "../../values/get.ts";
import { transcriptValue } from "../../values/spilled_outcome.ts";
import { blobGetParams, valueGetParams } from "../../values/params.ts";

/** `value.get` and `blob.get` (K-VAL-*, K-BLOB-*): bounded reads of stored values and blobs. */
export const VALUE_METHODS: MethodSpec[] = [
  attached("value.get", valueGetParams, async ({ attachment }, p) => {
    const { n, value } = attachment.session.lookup(p.ref);
    return valueGet(await transcriptValue(value), p, { uri: outUri(n), tty: attachment.tty });
  }),
  attached("blob.get", blobGetParams, ({ kernel }, p) => blobGet(kernel.cas, p)),
];
