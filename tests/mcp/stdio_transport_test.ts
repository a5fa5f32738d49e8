import assert from "node:assert/strict";
// @ts-types="@modelcontextprotocol/sdk/types"
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
import { StdioTransport } from "../../src/mcp/stdio_transport.ts";
import { updateFrames } from "../../src/mcp/update_frame.ts";
import { FeedReader, SlowWriter } from "../_support/byte_streams.ts";
import { waitUntil } from "../_support/wait.ts";

function setup(step = 1 << 20) {
  const reader = new FeedReader();
  const writer = new SlowWriter(step);
  const transport = new StdioTransport(reader, writer, 2000);
  const received: JSONRPCMessage[] = [];
  transport.onmessage = (m) => received.push(m);
  return { reader, writer, transport, received };
}

async function settle(ms = 30): Promise<void> {
  await new Promise((resolve) => setTimeout(resolve, ms));
}

Deno.test("W-FRAME-8: concurrent notifications and responses are written as whole frames in send order", async () => {
  const { reader, writer, transport, received } = setup(777);
  await transport.start();
  for (let i = 0; i < 20; i++) {
    reader.feed(JSON.stringify({ jsonrpc: "2.0", id: `r${i}`, method: "ping" }) + "\n");
  }
  await settle();
  assert.equal(received.length, 20);
  const big = "x".repeat(4000);
  const sends: Promise<void>[] = [];
  for (let i = 0; i < 20; i++) {
    sends.push(
      transport.send({
        jsonrpc: "2.0",
        method: "notifications/progress",
        params: { progressToken: i, progress: i, big },
      }),
    );
    const id = (received[i] as { id: number }).id;
    sends.push(transport.send({ jsonrpc: "2.0", id, result: { i, big } }));
  }
  await Promise.all(sends);
  const frames = writer.frames();
  assert.equal(frames.length, 40);
  for (let i = 0; i < 20; i++) {
    assert.equal((frames[2 * i].params as { progress: number }).progress, i);
    assert.equal(frames[2 * i + 1].id, `r${i}`);
    assert.equal((frames[2 * i + 1].result as { i: number }).i, i);
  }
  reader.end();
  await transport.finished;
});

Deno.test("W-FRAME-8, M-SUB-3: encoded update frames and sent messages go out whole, in call order; none once closed", async () => {
  const { reader, writer, transport } = setup(777);
  await transport.start();
  const update = updateFrames("shoal://events/user.x");
  const big = "y".repeat(3000);
  const sends: (Promise<void> | undefined)[] = [];
  for (let i = 0; i < 30; i++) {
    sends.push(transport.sendFrame(update.values(i, { i, big })));
    sends.push(transport.send({ jsonrpc: "2.0", method: "notifications/message", params: { i } }));
  }
  await Promise.all(sends);
  const frames = writer.frames();
  assert.equal(frames.length, 60);
  for (let i = 0; i < 30; i++) {
    assert.deepEqual(frames[2 * i].params, {
      uri: "shoal://events/user.x",
      seq: i,
      payload: { i, big },
    });
    assert.deepEqual(frames[2 * i + 1].params, { i });
  }
  reader.end();
  await transport.finished;
  await transport.sendFrame(update.values(30, {}));
  assert.equal(writer.frames().length, 60);
});

Deno.test("W-FRAME-5: an oversize stdin frame gets -32600 id null and the next frame is still served", async () => {
  const { reader, writer, transport, received } = setup();
  await transport.start();
  const mib = new Uint8Array(1 << 20).fill(0x61);
  for (let i = 0; i < 17; i++) reader.feed(mib);
  reader.feed('\n{"jsonrpc":"2.0","id":5,"method":"ping"}\n');
  assert.ok(await waitUntil(() => received.length === 1 && writer.frames().length === 1, 10000));
  assert.deepEqual(writer.frames(), [{
    jsonrpc: "2.0",
    id: null,
    error: { code: -32600, message: "frame exceeds 16 MiB" },
  }]);
  assert.equal(received.length, 1);
  assert.equal((received[0] as { method: string }).method, "ping");
  await transport.send({ jsonrpc: "2.0", id: (received[0] as { id: number }).id, result: {} });
  assert.deepEqual(writer.frames()[1], { jsonrpc: "2.0", id: 5, result: {} });
  reader.end();
  await transport.finished;
});

Deno.test("W-FRAME-2: a frame of exactly 16 MiB is accepted", async () => {
  const { reader, writer, transport, received } = setup();
  await transport.start();
  const head = '{"jsonrpc":"2.0","id":1,"method":"ping","params":{"pad":"';
  const tail = '"}}';
  const pad = 16 * 1024 * 1024 - head.length - tail.length;
  reader.feed(head + "p".repeat(pad) + tail + "\n");
  assert.ok(await waitUntil(() => received.length === 1, 10000));
  assert.equal(received.length, 1);
  assert.deepEqual(writer.frames(), []);
  reader.end();
  await transport.finished;
});

Deno.test("W-FRAME-6/7, W-RPC-1/2: envelope errors are answered by the transport itself", async () => {
  const { reader, writer, transport, received } = setup();
  await transport.start();
  const lines = [
    "{not json",
    "[]",
    '[{"jsonrpc":"2.0","id":1,"method":"ping"}]',
    "5",
    '{"jsonrpc":"2.0","id":{},"method":"ping"}',
    '{"jsonrpc":"2.0","id":[1],"method":"ping"}',
    '{"jsonrpc":"2.0","id":1.5,"method":"ping"}',
    '{"jsonrpc":"2.0","id":true,"method":"ping"}',
    '{"jsonrpc":"2.0","id":9007199254740992,"method":"ping"}',
    '{"jsonrpc":"2.0","id":null,"method":"ping"}',
    '{"jsonrpc":"1.0","id":7,"method":"ping"}',
    '{"jsonrpc":"2.0","id":8}',
    '{"jsonrpc":"2.0","id":9,"method":5}',
    '{"jsonrpc":"2.0","id":10,"method":"ping","params":[1]}',
    '{"jsonrpc":"2.0","id":11,"method":"ping","params":{"_meta":{"progressToken":{}}}}',
  ];
  reader.feed(lines.join("\r\n") + "\n\n");
  assert.ok(await waitUntil(() => writer.frames().length === lines.length, 10000));
  const frames = writer.frames();
  const summary = frames.map((f) => [f.id, (f.error as { code: number }).code]);
  assert.deepEqual(summary, [
    [null, -32700],
    [null, -32600],
    [null, -32600],
    [null, -32600],
    [null, -32600],
    [null, -32600],
    [null, -32600],
    [null, -32600],
    [null, -32600],
    [null, -32600],
    [7, -32600],
    [8, -32600],
    [9, -32600],
    [10, -32602],
    [11, -32602],
  ]);
  const parse = frames[0].error as { message: string; data: { detail: unknown } };
  assert.equal(parse.message, "parse error");
  assert.equal(typeof parse.data.detail, "string");
  assert.equal(received.length, 0, "nothing reached the SDK");
  reader.end();
  await transport.finished;
});

Deno.test("M-PROG-3: a cancelled request (even id 0) reaches the SDK by internal id and its response is dropped", async () => {
  const { reader, writer, transport, received } = setup();
  await transport.start();
  reader.feed('{"jsonrpc":"2.0","id":0,"method":"tools/call"}\n');
  reader.feed('{"jsonrpc":"2.0","id":"0","method":"tools/call"}\n');
  await settle();
  const [first, second] = received as { id: number }[];
  assert.notEqual(first.id, 0);
  reader.feed('{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":0}}\n');
  reader.feed('{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":42}}\n');
  await settle();
  assert.equal(received.length, 3, "the unknown id's cancellation is not forwarded");
  assert.deepEqual((received[2] as { params: unknown }).params, { requestId: first.id });
  await transport.send({ jsonrpc: "2.0", id: first.id, result: {} });
  await transport.send({ jsonrpc: "2.0", id: second.id, result: {} });
  assert.deepEqual(writer.frames(), [{ jsonrpc: "2.0", id: "0", result: {} }]);
  reader.end();
  await transport.finished;
});

Deno.test("M-CLI-3: at stdin EOF a request in flight is still answered, then the transport closes", async () => {
  const { reader, writer, transport, received } = setup();
  let closed = false;
  transport.onclose = () => closed = true;
  await transport.start();
  reader.feed('{"jsonrpc":"2.0","id":"a","method":"ping"}\n');
  reader.end();
  await settle();
  assert.equal(closed, false);
  await transport.send({ jsonrpc: "2.0", id: (received[0] as { id: number }).id, result: {} });
  await transport.finished;
  assert.equal(closed, true);
  assert.deepEqual(writer.frames(), [{ jsonrpc: "2.0", id: "a", result: {} }]);
});

Deno.test("M-CLI-3: a failed stdout write closes the transport", async () => {
  const { writer, transport } = setup();
  let closed = false;
  transport.onclose = () => closed = true;
  await transport.start();
  writer.fail = true;
  await transport.send({ jsonrpc: "2.0", method: "notifications/progress", params: {} });
  await transport.finished;
  assert.equal(closed, true);
  assert.equal(transport.isClosed, true);
});
