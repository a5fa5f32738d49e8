import assert from "node:assert/strict";
import { type FrameEvent, LineFramer, readMessages } from "../../src/protocol/framing.ts";
import { FRAME_LIMIT, READ_CHUNK } from "../../src/protocol/limits.ts";

const enc = new TextEncoder();
const dec = new TextDecoder();

function texts(events: FrameEvent[]): string[] {
  return events.map((e) => e.kind === "frame" ? dec.decode(e.bytes) : "<oversize>");
}

Deno.test("a frame split across many chunks is reassembled (W-FRAME-1)", () => {
  const framer = new LineFramer();
  const bytes = enc.encode('{"jsonrpc":"2.0","id":1,"method":"x"}\n');
  const out: FrameEvent[] = [];
  for (const b of bytes) out.push(...framer.push(new Uint8Array([b])));
  assert.deepEqual(texts(out), ['{"jsonrpc":"2.0","id":1,"method":"x"}']);
});

Deno.test("several frames in one chunk come out in order; empty lines and CR are dropped", () => {
  const framer = new LineFramer();
  const out = framer.push(enc.encode('{"a":1}\n\n\r\n{"b":2}\r\n{"c"'));
  assert.deepEqual(texts(out), ['{"a":1}', '{"b":2}']);
  assert.deepEqual(texts(framer.push(enc.encode(":3}\n"))), ['{"c":3}']);
});

Deno.test("a frame whole in one chunk is a view of it, uncopied; the framer copies only what it keeps", () => {
  const framer = new LineFramer();
  const chunk = enc.encode('{"a":1}\n{"b"');
  const [whole] = framer.push(chunk);
  assert.ok(whole.kind === "frame" && whole.bytes.buffer === chunk.buffer);
  chunk.fill(0x20); // the caller reuses its buffer for the next read
  const [rest] = framer.push(enc.encode(":2}\n"));
  assert.deepEqual(texts([rest]), ['{"b":2}']);
});

Deno.test("a frame of exactly the limit is accepted, one byte more is oversize (W-FRAME-2)", () => {
  const framer = new LineFramer(10);
  assert.deepEqual(texts(framer.push(enc.encode("0123456789\n"))), ["0123456789"]);
  assert.deepEqual(texts(framer.push(enc.encode("0123456789A\nok\n"))), ["<oversize>", "ok"]);
});

Deno.test("a 17 MiB line is reported while accumulating, buffering stays bounded, and the next frame is served (W-FRAME-3/4)", () => {
  const framer = new LineFramer();
  const chunk = new Uint8Array(READ_CHUNK).fill(0x61);
  const seen: FrameEvent[] = [];
  let peak = 0;
  let oversizeAt = -1;
  const total = 17 * 1024 * 1024;
  for (let sent = 0; sent < total; sent += chunk.length) {
    const events = framer.push(chunk);
    if (events.length > 0 && oversizeAt < 0) oversizeAt = sent + chunk.length;
    seen.push(...events);
    peak = Math.max(peak, framer.buffered);
  }
  // Reported before the newline ever arrives, as soon as the limit is crossed.
  assert.deepEqual(texts(seen), ["<oversize>"]);
  assert.ok(oversizeAt <= FRAME_LIMIT + 2 * READ_CHUNK);
  assert.ok(peak <= FRAME_LIMIT + READ_CHUNK, `peak ${peak}`);
  assert.equal(framer.buffered, 0);
  assert.deepEqual(texts(framer.push(enc.encode('aaaa\n{"next":true}\n'))), ['{"next":true}']);
});

Deno.test("invalid UTF-8 passes through the framer as bytes (decoding is the envelope's job)", () => {
  const framer = new LineFramer();
  const out = framer.push(new Uint8Array([0xff, 0xfe, 0x0a]));
  assert.equal(out.length, 1);
  assert.equal(out[0].kind, "frame");
  if (out[0].kind === "frame") assert.deepEqual([...out[0].bytes], [0xff, 0xfe]);
});

Deno.test("readMessages decodes frames split across chunks and turns an oversize frame into -32600 id null", async () => {
  const chunks = [
    enc.encode('{"jsonrpc":"2.0","id":1,"me'),
    enc.encode('thod":"a"}\n'),
    new Uint8Array(FRAME_LIMIT + 1).fill(0x61),
    enc.encode('\n{"jsonrpc":"2.0","method":"n"}\n'),
  ];
  // A reader that hands out at most one chunk per read, into the caller's buffer.
  const reader = {
    read(p: Uint8Array): Promise<number | null> {
      const chunk = chunks.shift();
      if (chunk === undefined) return Promise.resolve(null);
      const n = Math.min(p.length, chunk.length);
      p.set(chunk.subarray(0, n));
      if (n < chunk.length) chunks.unshift(chunk.subarray(n));
      return Promise.resolve(n);
    },
  };
  const out = [];
  for await (const msg of readMessages(reader, "mcp")) out.push(msg);
  assert.deepEqual(out, [
    { kind: "request", id: 1, method: "a", params: {} },
    { kind: "invalid", id: null, error: { code: -32600, message: "frame exceeds 16 MiB" } },
    { kind: "notification", method: "n", params: {} },
  ]);
});
