/**
 * Kernel `event` frames forwarded undecoded (eventValues): whatever it takes, its seq and payload
 * bytes build exactly the update frame the general decoder and encoder build; what is not JSON it
 * never takes, so the general decoder still rejects it.
 */
import assert from "node:assert/strict";
import { eventValues } from "../../src/protocol/event_frame.ts";
import { REPLY_NESTING_LIMIT } from "../../src/protocol/limits.ts";
import { decodeFrame, encodeFrame } from "../../src/protocol/rpc.ts";
import { updateFrames } from "../../src/mcp/update_frame.ts";

const enc = new TextEncoder();
const frames = updateFrames("shoal://events/user.x");
const HEAD =
  '{"jsonrpc":"2.0","method":"event","params":{"channel":"user.x","seq":7,"ts":1767225600123456789,"payload":';

/** The kernel's frame of an event with `payload`, without its newline. */
function kernelFrame(payload: unknown, seq: unknown = 7): Uint8Array {
  const bytes = encodeFrame({
    jsonrpc: "2.0",
    method: "event",
    params: { channel: "user.x", seq, ts: 1767225600123456789n, payload },
  });
  return bytes.subarray(0, bytes.length - 1);
}

/** A frame whose payload is written as `text` (any bytes). */
function frameWith(text: string | Uint8Array): Uint8Array {
  const payload = typeof text === "string" ? enc.encode(text) : text;
  return Uint8Array.from([...enc.encode(HEAD), ...payload, ...enc.encode("}}")]);
}

/**
 * Whether `frame` is taken undecoded; when it is, the general path must decode it as an event and
 * encode the same update frame from it.
 */
function taken(frame: Uint8Array): boolean {
  const fast = eventValues(frame, REPLY_NESTING_LIMIT);
  if (fast === null) return false;
  const msg = decodeFrame(frame, "mcp", REPLY_NESTING_LIMIT);
  assert.equal(msg.kind, "notification", new TextDecoder().decode(frame));
  if (msg.kind !== "notification") return true;
  assert.equal(msg.method, "event");
  assert.deepEqual(
    frames.bytes(fast.seq, fast.payload),
    frames.values(msg.params.seq, msg.params.payload),
  );
  return true;
}

Deno.test("M-SUB-3: the kernel's event frames are taken undecoded and give the general encoder's bytes", () => {
  const payloads: unknown[] = [
    { i: 0 },
    { dropped: 37, latest_seq: 991 },
    null,
    true,
    false,
    "",
    {},
    [],
    'line\nnext\t"q" \\ \b\f\r \u0000 \u001f \u007f é✓𝄞 \u2028 \uFFFD \uFFFF',
    { "é✓𝄞": "key", __proto__x: 1, "": 2, "-1": 3, "a b": [] },
    [0, -1, 1.5, -0.001, 1e21, 1e-7, 5e-324, 1.7976931348623157e308, 123456789012345678, -0],
    { deep: [[[{ a: [{}] }]]] },
    { task: "task:7", state: "completed", result_ref: "out:12" },
    JSON.parse('{"__proto__":{"a":1}}'),
  ];
  for (const payload of payloads) assert.ok(taken(kernelFrame(payload)), JSON.stringify(payload));
  for (const seq of [0, 991, 2 ** 53 - 1, null, "s"]) assert.ok(taken(kernelFrame({ i: 1 }, seq)));
});

Deno.test("M-SUB-3: JSON that JSON.stringify would write otherwise is left to the general path", () => {
  const texts = [
    '{"a":1.0}',
    "1e2",
    "1E5",
    "-0",
    "0.10",
    "12345678901234567890",
    '"\\u0041"',
    '"\\/"',
    '"\\u001F"',
    '"\\u000a"',
    '"\\ud800"',
    '"\\ud83d\\ude00"',
    '{"a":1,"a":2}',
    '{"b":1,"1":2}',
    '{"1":2}',
    ' {"a":1}',
    '{"a": 1}',
    "[1 ]",
    JSON.stringify(Object.fromEntries(Array.from({ length: 65 }, (_, i) => [`k${i}`, i]))),
  ];
  for (const text of texts) {
    assert.equal(taken(frameWith(text)), false, text);
    assert.equal(decodeFrame(frameWith(text), "mcp", REPLY_NESTING_LIMIT).kind, "notification");
  }
});

Deno.test("M-START-4: a frame that is not JSON, not UTF-8 or nested too deeply is never taken, and the general path rejects it", () => {
  const bad: (string | Uint8Array)[] = [
    '{"a":}',
    "[1,]",
    "[1,2",
    '{"a":1',
    "tru",
    "nul",
    "01",
    "-",
    "1.",
    ".5",
    "+1",
    "1e",
    "NaN",
    "Infinity",
    '"unterminated',
    '"raw\u0001control"',
    '"\\x"',
    '"\\u00zz"',
    "",
    '{"a":1}}',
    '{"a":1}x',
    Uint8Array.of(0x22, 0xff, 0x22),
    Uint8Array.of(0x22, 0xc0, 0x80, 0x22),
    Uint8Array.of(0x22, 0xed, 0xa0, 0x80, 0x22),
    Uint8Array.of(0x22, 0xe2, 0x82, 0x22),
    Uint8Array.of(0x22, 0xf4, 0x90, 0x80, 0x80, 0x22),
    "[".repeat(REPLY_NESTING_LIMIT - 1) + "]".repeat(REPLY_NESTING_LIMIT - 1),
  ];
  for (const text of bad) {
    assert.equal(eventValues(frameWith(text), REPLY_NESTING_LIMIT), null, String(text));
    assert.equal(decodeFrame(frameWith(text), "mcp", REPLY_NESTING_LIMIT).kind, "invalid");
  }
  // The deepest payload the general path accepts is taken.
  const deepest = REPLY_NESTING_LIMIT - 2;
  assert.ok(taken(frameWith("[".repeat(deepest) + "]".repeat(deepest))));
  // Other shapes of event frame go the general way.
  const other =
    '{"jsonrpc":"2.0","method":"event","params":{"seq":1,"channel":"user.x","ts":1,"payload":1}}';
  assert.equal(eventValues(enc.encode(other), REPLY_NESTING_LIMIT), null);
  const stringTs = HEAD.replace("1767225600123456789", '"1"') + "1}}";
  assert.equal(eventValues(enc.encode(stringTs), REPLY_NESTING_LIMIT), null);
});

/** A small deterministic generator (tests must not depend on luck). */
function rng(seed: number): () => number {
  return () => {
    seed = (seed * 1103515245 + 12345) % 2 ** 31;
    return seed / 2 ** 31;
  };
}

function randomValue(r: () => number, depth: number): unknown {
  const pick = Math.floor(r() * (depth > 3 ? 5 : 7));
  const chars = ["a", "é", "𝄞", "\n", '"', "\\", "\u0001", "\u007f", "\u2028", "0", "\ud800"];
  const str = () =>
    Array.from({ length: Math.floor(r() * 5) }, () => chars[Math.floor(r() * chars.length)]).join(
      "",
    );
  switch (pick) {
    case 0:
      return [null, true, false][Math.floor(r() * 3)];
    case 1:
      return [0, -1, 7, 0.1, -2.5e-9, 1e21, 2 ** 53, 123.456, -0][Math.floor(r() * 9)];
    case 2:
    case 3:
      return str();
    case 4:
      return Math.floor(r() * 1e6);
    case 5:
      return Array.from({ length: Math.floor(r() * 4) }, () => randomValue(r, depth + 1));
    default:
      return Object.fromEntries(
        Array.from({ length: Math.floor(r() * 4) }, () => [str(), randomValue(r, depth + 1)]),
      );
  }
}

Deno.test("M-SUB-3: random payloads, and random byte edits of their frames: whatever is taken gives the general encoder's bytes", () => {
  const r = rng(18);
  let takenCount = 0;
  for (let n = 0; n < 3000; n++) {
    const frame = kernelFrame(randomValue(r, 0));
    if (taken(frame)) takenCount++;
    const edited = frame.slice();
    const at = HEAD.length - 10 + Math.floor(r() * (frame.length - HEAD.length + 10));
    const bytes = [
      0x22,
      0x5c,
      0x7b,
      0x7d,
      0x5b,
      0x5d,
      0x2c,
      0x3a,
      0x30,
      0x31,
      0x2d,
      0x2e,
      0x65,
      0x20,
      0x80,
      0xc3,
      0xff,
      0x75,
    ];
    edited[Math.min(at, frame.length - 1)] = bytes[Math.floor(r() * bytes.length)];
    taken(edited);
    const fast = eventValues(edited, REPLY_NESTING_LIMIT);
    if (fast === null) continue;
    assert.notEqual(decodeFrame(edited, "mcp", REPLY_NESTING_LIMIT).kind, "invalid");
  }
  // Only payloads with digit-first keys or lone surrogates are left to the general path.
  assert.ok(takenCount > 2000, `taken ${takenCount} of 3000`);
});
