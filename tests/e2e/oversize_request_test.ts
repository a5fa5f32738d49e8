/** End to end: an MCP request within the frame limit whose kernel request is not (M-IN-1, W-FRAME-2/4). */
import assert from "node:assert/strict";
import { RawFacade } from "../_support/facade.ts";
import type { Rec } from "../_support/rec.ts";
import { sandbox } from "../_support/sandbox.ts";

const FRAME_LIMIT = 16 * 1024 * 1024;

Deno.test("M-IN-1/W-FRAME-4 a shoal_exec whose MCP frame is within 16 MiB but whose kernel request is not is answered -32602, on the same kernel connection: the next call runs in the same session", async () => {
  const box = await sandbox();
  const facade = new RawFacade(box, [], { SHOAL_SOCKET: box.socket() });
  try {
    await facade.request(0, "initialize", {
      protocolVersion: "2025-06-18",
      capabilities: {},
      clientInfo: { name: "oversize", version: "0" },
    });
    await facade.send({ jsonrpc: "2.0", method: "notifications/initialized" });
    const call = (id: number, src: string) => ({
      jsonrpc: "2.0",
      id,
      method: "tools/call",
      params: { name: "shoal_exec", arguments: { src } },
    });
    const moved = await facade.request(1, "tools/call", call(1, "cd / && echo moved").params);
    assert.equal(((moved.result as Rec).structuredContent as Rec).ref, "out:1");
    // exactly the frame limit on stdin; the kernel request adds its own members to it
    const src = "#" + "a".repeat(FRAME_LIMIT - JSON.stringify(call(2, "#")).length);
    assert.equal(JSON.stringify(call(2, src)).length, FRAME_LIMIT);
    await facade.send(call(2, src));
    const big = await facade.response(2, 60000);
    assert.equal((big.error as Rec | undefined)?.code, -32602, JSON.stringify(big).slice(0, 300));
    const pwd = await facade.request(3, "tools/call", call(3, "pwd").params);
    const out = (((pwd.result as Rec).structuredContent as Rec).value as Rec).out;
    assert.deepEqual(out, { $: "str", v: "/\n" });
  } finally {
    facade.kill();
    await facade.exit().catch(() => {});
    await box.cleanup();
  }
});
