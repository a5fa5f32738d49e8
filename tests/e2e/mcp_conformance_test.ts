// The facade as raw MCP clients drive it over stdio (M-PROTO-*, M-PROG-3): messages that real
// clients send a little off the schema, and what each of them must still get.
import assert from "node:assert/strict";
import { RawFacade, withRawFacade } from "../_support/facade.ts";
import type { Rec } from "../_support/rec.ts";
import { sandbox } from "../_support/sandbox.ts";
import { delay } from "../_support/wait.ts";

/** Reads `shoal://jobs` until the job whose cmd is `cmd` is in `state`; the job, or null after 10 s. */
async function jobInState(facade: RawFacade, cmd: string, state: string): Promise<Rec | null> {
  const deadline = Date.now() + 10000;
  while (Date.now() < deadline) {
    const read = await facade.request(`jobs-${crypto.randomUUID()}`, "resources/read", {
      uri: "shoal://jobs",
    });
    const jobs = (read.result as Rec).structuredContent as Rec[];
    const job = jobs.find((j) => j.cmd === cmd);
    if (job?.state === state) return job;
    await delay(100);
  }
  return null;
}

for (
  const [what, extra] of [
    ["a null reason", { reason: null }],
    ["a numeric reason", { reason: 5 }],
    ["a malformed _meta", { _meta: { progressToken: 1.5 } }],
  ] as const
) {
  Deno.test(`M-PROG-3: a notifications/cancelled with ${what} for a running shoal_exec cancels its task, as it drops its response`, async () => {
    await withRawFacade(async (facade) => {
      const src = `sleep 33 # ${what}`;
      await facade.send({
        jsonrpc: "2.0",
        id: 1,
        method: "tools/call",
        params: { name: "shoal_exec", arguments: { src } },
      });
      assert.ok(await jobInState(facade, src, "running"), "the run started");
      await facade.send({
        jsonrpc: "2.0",
        method: "notifications/cancelled",
        params: { requestId: 1, ...extra },
      });
      // Before: the response was dropped (the transport forgot the id) while the run went on
      // (the server ignored the cancellation for its reason): the client waited on nothing.
      assert.ok(await jobInState(facade, src, "cancelled"), "the task was cancelled");
      assert.equal(facade.queued.some((f) => (f as Rec).id === 1), false, "no response for id 1");
    });
  });
}

Deno.test("MCP pagination: tools/list, resources/list and resources/templates/list answer one page without nextCursor, so a cursor they never issued is -32602, as tasks/list's is (M-TOOL-1, M-RES-1/2)", async () => {
  await withRawFacade(async (facade) => {
    for (const method of ["tools/list", "resources/list", "resources/templates/list"]) {
      const page = await facade.request(`${method}-1`, method, {});
      assert.ok(page.result, `${method} answers`);
      assert.equal((page.result as Rec).nextCursor, undefined, `${method} has one page`);
      // Before: the whole list again, as if "page-2" were a cursor it had issued.
      const paged = await facade.request(`${method}-2`, method, { cursor: "page-2" });
      assert.equal((paged.error as Rec | undefined)?.code, -32602, `${method} with a cursor`);
    }
  });
});

Deno.test("M-PROTO-2: a method named like a property every object has (constructor, toString, hasOwnProperty, valueOf, __proto__) is -32601 with data.method, as any other unknown method", async () => {
  await withRawFacade(async (facade) => {
    for (
      const method of ["constructor", "toString", "hasOwnProperty", "valueOf", "__proto__"]
    ) {
      // Before: constructor answered {}, toString the string "[object Undefined]" (a result that
      // is no object) and hasOwnProperty -32603: the dispatcher looked methods up in a plain object.
      const answer = await facade.request(method, method, {});
      assert.equal(answer.result, undefined, `${method}: no result`);
      assert.deepEqual((answer.error as Rec).data, { method }, method);
      assert.equal((answer.error as Rec).code, -32601, method);
    }
  });
});

Deno.test({
  name:
    "ignored, needs a SPEC decision between M-PROTO-1 and W-FRAME-7: MCP 2025-03-26, a version M-PROTO-1 answers as requested, says implementations MUST support receiving JSON-RPC batches, but W-FRAME-7 refuses every batch with one -32600 of id null, so a 2025-03-26 client's batched pings are never answered under their ids (2025-06-18 removed batches)",
  ignore: true,
  fn: async () => {
    const box = await sandbox();
    const facade = new RawFacade(box);
    try {
      await facade.request(1, "initialize", {
        protocolVersion: "2025-03-26",
        capabilities: {},
        clientInfo: { name: "raw", version: "0" },
      });
      await facade.send([
        { jsonrpc: "2.0", id: 2, method: "ping" },
        { jsonrpc: "2.0", id: 3, method: "ping" },
      ]);
      const answer = await facade.next();
      assert.ok(Array.isArray(answer), `one array of responses, got ${JSON.stringify(answer)}`);
      assert.deepEqual((answer as unknown as Rec[]).map((r) => r.id).sort(), [2, 3]);
    } finally {
      await facade.stop().catch(() => facade.kill());
      await box.cleanup();
    }
  },
});
