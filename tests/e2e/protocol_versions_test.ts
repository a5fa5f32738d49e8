// M-PROTO-1, M-TASKS-1, M-META-1 with the SDK 1.32.2 Client over stdio against the real facade:
// the versions `initialize` answers, and what each version lists.
import assert from "node:assert/strict";
// @ts-types="@modelcontextprotocol/sdk/client/index"
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
// @ts-types="@modelcontextprotocol/sdk/shared/transport"
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
// @ts-types="@modelcontextprotocol/sdk/types"
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
import { sdkTransport } from "../_support/facade.ts";
import type { Rec } from "../_support/rec.ts";
import { sandbox } from "../_support/sandbox.ts";
import { TOOLS } from "../../src/mcp/tool_schemas.ts";

/**
 * The SDK's stdio transport with the `initialize` request asking for `version` (the SDK Client
 * always asks for its latest), recording the answered version.
 */
class VersionTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;
  answered: string | null = null;

  constructor(readonly inner: ReturnType<typeof sdkTransport>, readonly version: string) {
    inner.onclose = () => this.onclose?.();
    inner.onerror = (e) => this.onerror?.(e);
    inner.onmessage = (message) => {
      const result = (message as { result?: Rec }).result;
      if (typeof result?.protocolVersion === "string") this.answered = result.protocolVersion;
      this.onmessage?.(message);
    };
  }

  start(): Promise<void> {
    return this.inner.start();
  }

  send(message: JSONRPCMessage): Promise<void> {
    if ("method" in message && message.method === "initialize") {
      message = { ...message, params: { ...message.params, protocolVersion: this.version } };
    }
    return this.inner.send(message);
  }

  close(): Promise<void> {
    return this.inner.close();
  }
}

for (
  const [requested, answered] of [
    ["2025-11-25", "2025-11-25"],
    ["2025-06-18", "2025-06-18"],
    ["2026-07-28", "2025-11-25"],
  ]
) {
  Deno.test(`initialize asking for ${requested} answers ${answered}; tasks, the execution member and the description only under 2025-11-25; under 2025-06-18 tools/list is today's, titles included (M-PROTO-1, M-TASKS-1, M-META-1)`, async () => {
    const box = await sandbox();
    const client = new Client({ name: "shoal-e2e-versions", version: "0" });
    const transport = new VersionTransport(sdkTransport(box), requested);
    try {
      await client.connect(transport);
      assert.equal(transport.answered, answered);
      const tasks = answered === "2025-11-25";
      assert.deepEqual(
        client.getServerCapabilities()?.tasks,
        tasks ? { list: {}, cancel: {}, requests: { tools: { call: {} } } } : undefined,
      );
      assert.equal(typeof client.getServerVersion()?.description, tasks ? "string" : "undefined");
      const { tools } = await client.listTools();
      assert.deepEqual(tools.map((t) => t.title), TOOLS.map((t) => t.title));
      assert.ok(tools.every((t) => typeof t.title === "string" && t.title.length > 0));
      if (tasks) {
        assert.deepEqual(tools[0].execution, { taskSupport: "optional" });
        assert.ok(tools.slice(1).every((t) => t.execution === undefined));
      } else {
        assert.deepEqual(tools, TOOLS, "today's list: titles and no task member");
      }
    } finally {
      await client.close();
      await box.cleanup();
    }
  });
}
