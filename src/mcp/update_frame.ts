const encoder = new TextEncoder();

/**
 * Builds the `notifications/resources/updated` frames of one subscribed URI (M-SUB-3) from a
 * kernel event's `seq` and `payload`, byte for byte as `encodeFrame` writes the message, by
 * joining texts: per event only the two values are serialized.
 */
export function updateFrames(uri: string): (seq: unknown, payload: unknown) => Uint8Array {
  const head = `{"jsonrpc":"2.0","method":"notifications/resources/updated","params":{"uri":${
    JSON.stringify(uri)
  },"seq":`;
  // Values decoded from a kernel frame hold no bigint, so the plain (fast) stringify is exact.
  return (seq, payload) =>
    encoder.encode(
      `${head}${JSON.stringify(seq ?? null)},"payload":${JSON.stringify(payload ?? null)}}}\n`,
    );
}
