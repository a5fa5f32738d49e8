// The facade's own requests to the client (M-ELICIT-2): matched by id, bounded in number and in
// time, withdrawn with notifications/cancelled when their call is cancelled.
import assert from "node:assert/strict";
import { ClientRequests, MAX_PENDING_CLIENT_REQUESTS } from "../../src/mcp/client_requests.ts";
import { StdioTransport } from "../../src/mcp/stdio_transport.ts";
import { FeedReader, SlowWriter } from "../_support/byte_streams.ts";
import { waitUntil } from "../_support/wait.ts";

type Frame = Record<string, unknown>;

async function withTransport(
  timeoutMs: number,
  body: (client: ClientRequests, input: FeedReader, output: SlowWriter) => Promise<void>,
): Promise<void> {
  const input = new FeedReader();
  const output = new SlowWriter(1 << 20);
  const transport = new StdioTransport(input, output, 100);
  await transport.start();
  try {
    await body(new ClientRequests(transport, timeoutMs), input, output);
  } finally {
    input.end();
    await transport.finished;
  }
}

function requests(output: SlowWriter): Frame[] {
  return output.frames().filter((f) => "method" in f && "id" in f);
}

Deno.test("a response is matched to its request by id; an error response comes back as the error; unknown ids are ignored", async () => {
  await withTransport(60_000, async (client, input, output) => {
    const signal = new AbortController().signal;
    const first = client.request("elicitation/create", { message: "a" }, signal);
    const second = client.request("elicitation/create", { message: "b" }, signal);
    await waitUntil(() => requests(output).length === 2, 5000);
    const [a, b] = requests(output);
    assert.notEqual(a.id, b.id);
    input.feed(JSON.stringify({ jsonrpc: "2.0", id: "nobody", result: {} }) + "\n");
    input.feed(
      JSON.stringify({ jsonrpc: "2.0", id: b.id, error: { code: -32601, message: "no" } }) + "\n",
    );
    input.feed(JSON.stringify({ jsonrpc: "2.0", id: a.id, result: { action: "decline" } }) + "\n");
    assert.deepEqual(await first, { ok: true, result: { action: "decline" } });
    assert.deepEqual(await second, { ok: false, error: { code: -32601, message: "no" } });
  });
});

Deno.test("cancelling the caller withdraws the request with notifications/cancelled; a late answer is dropped", async () => {
  await withTransport(60_000, async (client, input, output) => {
    const controller = new AbortController();
    const reply = client.request("elicitation/create", { message: "a" }, controller.signal);
    await waitUntil(() => requests(output).length === 1, 5000);
    controller.abort();
    assert.deepEqual(await reply, { ok: false, error: null });
    const id = requests(output)[0].id;
    await waitUntil(
      () => output.frames().some((f) => f.method === "notifications/cancelled"),
      5000,
    );
    const withdrawn = output.frames().find((f) => f.method === "notifications/cancelled")!;
    assert.equal((withdrawn.params as Frame).requestId, id);
    input.feed(JSON.stringify({ jsonrpc: "2.0", id, result: { action: "accept" } }) + "\n");
  });
});

Deno.test("an unanswered request ends with no answer after the time bound and is withdrawn", async () => {
  await withTransport(50, async (client, _input, output) => {
    const reply = await client.request("elicitation/create", {}, new AbortController().signal);
    assert.deepEqual(reply, { ok: false, error: null });
    await waitUntil(
      () => output.frames().some((f) => f.method === "notifications/cancelled"),
      5000,
    );
  });
});

Deno.test("at most MAX_PENDING_CLIENT_REQUESTS wait at once; one more gets no answer without being sent", async () => {
  await withTransport(60_000, async (client, _input, output) => {
    const controller = new AbortController();
    const waiting = Array.from(
      { length: MAX_PENDING_CLIENT_REQUESTS },
      () => client.request("elicitation/create", {}, controller.signal),
    );
    assert.deepEqual(await client.request("elicitation/create", {}, controller.signal), {
      ok: false,
      error: null,
    });
    await waitUntil(() => requests(output).length === MAX_PENDING_CLIENT_REQUESTS, 5000);
    controller.abort();
    await Promise.all(waiting);
    assert.equal(requests(output).length, MAX_PENDING_CLIENT_REQUESTS);
  });
});
