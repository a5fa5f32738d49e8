/** The facade's `notifications/resources/updated` frames (M-SUB-3) are the frames `encodeFrame` writes. */
import assert from "node:assert/strict";
import { encodeFrame } from "../../src/protocol/rpc.ts";
import { updateFrames } from "../../src/mcp/update_frame.ts";

const update = (uri: string, seq: unknown, payload: unknown) =>
  encodeFrame({
    jsonrpc: "2.0",
    method: "notifications/resources/updated",
    params: { uri, seq, payload },
  });

Deno.test("M-SUB-3: an update frame is byte for byte the encoded notification, whatever the URI and payload hold", () => {
  const cases: [string, unknown, unknown][] = [
    ["shoal://events/user.bench", 1, { i: 0 }],
    ["shoal://task/task:12/out", 9007199254740991, { state: "exited", code: 0 }],
    ['shoal://events/user."quoted"\\name', 3, "a string"],
    ["shoal://events/user.é✓𝄞", 4, { text: 'line\nnext\t"q" \\ é✓𝄞 \u0000 \u2028' }],
    ["shoal://pty/pty:1", 5, [1, 2.5, -0.001, 1e21, null, true, { deep: [[[{}]]] }]],
    ["shoal://events/user.x", 6, { dropped: 37, latest_seq: 991 }],
    ["shoal://events/user.x", 7, null],
  ];
  for (const [uri, seq, payload] of cases) {
    assert.deepEqual(updateFrames(uri).values(seq, payload), update(uri, seq, payload));
  }
});

Deno.test("M-SUB-3: an event without seq or payload still gets both members, as null", () => {
  const frame = new TextDecoder().decode(
    updateFrames("shoal://events/user.x").values(undefined, undefined),
  );
  assert.ok(frame.endsWith("\n"));
  assert.deepEqual(JSON.parse(frame).params, {
    uri: "shoal://events/user.x",
    seq: null,
    payload: null,
  });
});
