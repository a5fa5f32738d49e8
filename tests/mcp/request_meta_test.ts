import assert from "node:assert/strict";
// The SDK's `./*` export maps `x.js` to a missing `x.js.d.ts`, so each import names its types.
// @ts-types="@modelcontextprotocol/sdk/types"
import { isJSONRPCNotification, isJSONRPCRequest } from "@modelcontextprotocol/sdk/types.js";
import { validMeta } from "../../src/mcp/request_meta.ts";

const CASES: unknown[] = [
  undefined,
  {},
  { progressToken: "t" },
  { progressToken: 7 },
  { progressToken: 0 },
  { progressToken: -3 },
  { progressToken: 1.5 },
  { progressToken: 2 ** 60 },
  { progressToken: null },
  { progressToken: {} },
  { progressToken: [] },
  { progressToken: true },
  { other: { any: "thing" } },
  { "io.modelcontextprotocol/related-task": { taskId: "t1" } },
  { "io.modelcontextprotocol/related-task": { taskId: "t1", extra: 1 } },
  { "io.modelcontextprotocol/related-task": { taskId: 1 } },
  { "io.modelcontextprotocol/related-task": {} },
  { "io.modelcontextprotocol/related-task": null },
  { "io.modelcontextprotocol/related-task": "t1" },
  null,
  [],
  "meta",
  7,
];

Deno.test("M-PROTO-2: a malformed _meta is judged exactly as the MCP SDK's request and notification schemas judge it", () => {
  for (const meta of CASES) {
    const params: Record<string, unknown> = meta === undefined ? {} : { _meta: meta };
    const request = { jsonrpc: "2.0", id: 1, method: "tools/list", params };
    const notification = { jsonrpc: "2.0", method: "notifications/cancelled", params };
    const label = JSON.stringify(meta) ?? "absent";
    assert.equal(validMeta(params), isJSONRPCRequest(request), `request, _meta ${label}`);
    assert.equal(validMeta(params), isJSONRPCNotification(notification), `notification, ${label}`);
  }
});
