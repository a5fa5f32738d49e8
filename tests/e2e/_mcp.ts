/**
 * Test helper for the end-to-end suites: the MCP SDK client driving `shoal-mcp` (spawned as
 * clients run it, `bin/shoal-mcp`) in a private sandbox, with the kernel autostarted by the facade.
 */
import assert from "node:assert/strict";
// @ts-types="@modelcontextprotocol/sdk/client/index"
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
// @ts-types="@modelcontextprotocol/sdk/shared/protocol"
import type { RequestOptions } from "@modelcontextprotocol/sdk/shared/protocol.js";
// @ts-types="@modelcontextprotocol/sdk/types"
import { McpError } from "@modelcontextprotocol/sdk/types.js";
import { rejection } from "../_support/rejection.ts";
import type { Rec } from "../_support/rec.ts";
import { type Sandbox, sandbox } from "../_support/sandbox.ts";
import { sdkTransport } from "../_support/facade.ts";

/** What a `tools/call` returned. */
export interface ToolReply {
  content: Rec[];
  structuredContent: Rec;
  isError: boolean;
}

/** What a `resources/read` returned. */
export interface ReadReply {
  contents: Rec[];
  structuredContent: unknown;
}

/** One MCP client connected to its own facade process. */
export interface Mcp {
  client: Client;
  /** The pid of its facade process (`bin/shoal-mcp` execs into it). */
  pid: number;
  /** The raw params of every `notifications/resources/updated` received (with `seq`, `payload`). */
  updates: Rec[];
  /** The raw params of every `notifications/tasks/status` received (M-TASKS-1). */
  taskStatuses: Rec[];
  /** Calls a tool and returns its result as the client received it. */
  call(name: string, args?: Rec, options?: RequestOptions): Promise<ToolReply>;
  /** Calls a tool, asserts it is not an error result, and returns its `structuredContent`. */
  ok(name: string, args?: Rec, options?: RequestOptions): Promise<Rec>;
  /** `resources/read` of `uri`. */
  read(uri: string): Promise<ReadReply>;
  /** Closes the client, which ends its facade (the kernel keeps running). */
  close(): Promise<void>;
}

/**
 * Starts a facade in `box` on the SDK's stdio transport (it autostarts the kernel when none
 * runs) and connects `client` (by default one declaring no capabilities) to it.
 */
export async function connectMcp(
  box: Sandbox,
  extraEnv: Record<string, string> = {},
  client = new Client({ name: "shoal-e2e", version: "0" }),
): Promise<Mcp> {
  const updates: Rec[] = [];
  const taskStatuses: Rec[] = [];
  // The SDK's typed handler would strip `seq` and `payload` (M-SUB-3), so take the raw frame.
  client.fallbackNotificationHandler = (n) => {
    if (n.method === "notifications/resources/updated") updates.push(n.params as Rec);
    if (n.method === "notifications/tasks/status") taskStatuses.push(n.params as Rec);
    return Promise.resolve();
  };
  const transport = sdkTransport(box, extraEnv);
  await client.connect(transport);
  const call = async (name: string, args: Rec = {}, options?: RequestOptions) =>
    await client.callTool({ name, arguments: args }, undefined, options) as unknown as ToolReply;
  return {
    client,
    pid: transport.pid!,
    updates,
    taskStatuses,
    call,
    async ok(name, args, options) {
      const r = await call(name, args, options);
      assert.equal(r.isError, false, `${name} failed: ${JSON.stringify(r.structuredContent)}`);
      return r.structuredContent;
    },
    async read(uri) {
      return await client.readResource({ uri }) as unknown as ReadReply;
    },
    close: () => client.close(),
  };
}

/**
 * A `Deno.test` with a fresh sandbox and one connected {@link Mcp}; `setup` may prepare the
 * sandbox and returns extra environment for the facade (and so for the kernel it autostarts).
 * Afterwards the client is closed and every process of the sandbox (kernel, facades) stopped.
 */
export function mcpTest(
  name: string,
  body: (mcp: Mcp, box: Sandbox) => Promise<void>,
  setup: (box: Sandbox) => Promise<Record<string, string>> = () => Promise.resolve({}),
): void {
  Deno.test(name, async () => {
    const box = await sandbox();
    try {
      const mcp = await connectMcp(box, await setup(box));
      try {
        await body(mcp, box);
      } finally {
        await mcp.close();
      }
    } finally {
      await box.cleanup();
    }
  });
}

/** The JSON-RPC error a client request fails with; a success fails the test. */
export function mcpError(p: Promise<unknown>): Promise<McpError> {
  return rejection(p, McpError);
}
