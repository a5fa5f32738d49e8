const encoder = new TextEncoder();

/** What an update frame holds around its `seq` and `payload` values. */
const PAYLOAD = encoder.encode(',"payload":');
const TAIL = encoder.encode("}}\n");

/**
 * Builders of the `notifications/resources/updated` frames of one subscribed URI (M-SUB-3), byte
 * for byte as `encodeFrame` writes the message, by joining a per-URI head with the event's `seq`
 * and `payload`: `values` serializes the two decoded values, `bytes` copies their JSON texts as
 * they came (canonical ones, see `eventValues`), so that an event is forwarded without parsing.
 */
export interface UpdateFrames {
  values(seq: unknown, payload: unknown): Uint8Array;
  bytes(seq: Uint8Array, payload: Uint8Array): Uint8Array;
}

/** The {@link UpdateFrames} of `uri`. */
export function updateFrames(uri: string): UpdateFrames {
  const head = `{"jsonrpc":"2.0","method":"notifications/resources/updated","params":{"uri":${
    JSON.stringify(uri)
  },"seq":`;
  const headBytes = encoder.encode(head);
  return {
    // Values decoded from a kernel frame hold no bigint, so the plain (fast) stringify is exact.
    values: (seq, payload) =>
      encoder.encode(
        `${head}${JSON.stringify(seq ?? null)},"payload":${JSON.stringify(payload ?? null)}}}\n`,
      ),
    // Five copies by hand: a loop over an array of the parts built one array and iterator more
    // per event, and ran slower until compiled (the first hundreds of events of a facade).
    bytes(seq, payload) {
      const seqAt = headBytes.length;
      const payloadAt = seqAt + seq.length + PAYLOAD.length;
      const frame = new Uint8Array(payloadAt + payload.length + TAIL.length);
      frame.set(headBytes);
      frame.set(seq, seqAt);
      frame.set(PAYLOAD, seqAt + seq.length);
      frame.set(payload, payloadAt);
      frame.set(TAIL, payloadAt + payload.length);
      return frame;
    },
  };
}
