/**
 * Test helper for the end-to-end suites: the MCP SDK client driving `shoal-mcp` (spawned like
 * `deno task mcp`) in a private sandbox, with the kernel autostarted by the facade.
 */
import assert from "node:assert/strict";
// @ts-types="@modelcontextprotocol/sdk/client/index"
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
// @ts-types="@modelcontextprotocol/sdk/shared/protocol"
import type { RequestOptions } from "@modelcontextprotocol/sdk/shared/protocol.js";
// @ts-types="@modelcontextprotocol/sdk/types"
import { McpError } from "@modelcontextprotocol/sdk/types.js";
import { delay, REPO, type Sandbox, sandbox, sdkTransport } from "../mcp/_facade.ts";

/** A JSON object. */
export type Rec = Record<string, unknown>;

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
  /** The raw params of every `notifications/resources/updated` received (with `seq`, `payload`). */
  updates: Rec[];
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
 * runs) and connects a client to it.
 */
export async function connectMcp(
  box: Sandbox,
  extraEnv: Record<string, string> = {},
): Promise<Mcp> {
  const client = new Client({ name: "shoal-e2e", version: "0" });
  const updates: Rec[] = [];
  // The SDK's typed handler would strip `seq` and `payload` (M-SUB-3), so take the raw frame.
  client.fallbackNotificationHandler = (n) => {
    if (n.method === "notifications/resources/updated") updates.push(n.params as Rec);
    return Promise.resolve();
  };
  await client.connect(sdkTransport(box, extraEnv));
  const call = async (name: string, args: Rec = {}, options?: RequestOptions) =>
    await client.callTool({ name, arguments: args }, undefined, options) as unknown as ToolReply;
  return {
    client,
    updates,
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

/**
 * The deno process serving `socket`: its command line names the socket (the sh wrapper is not
 * deno). A child the kernel is forking shares its exe and command line until it execs, so
 * matches whose parent also matches are skipped.
 */
export function kernelPid(socket: string): number {
  const parents = new Map<number, number>();
  for (const entry of Deno.readDirSync("/proc")) {
    if (!/^[0-9]+$/.test(entry.name)) continue;
    try {
      const argv = Deno.readTextFileSync(`/proc/${entry.name}/cmdline`).split("\0");
      if (argv.includes(socket) && /\/deno$/.test(Deno.readLinkSync(`/proc/${entry.name}/exe`))) {
        const stat = Deno.readTextFileSync(`/proc/${entry.name}/stat`);
        parents.set(
          Number(entry.name),
          Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]),
        );
      }
    } catch {
      // exited meanwhile
    }
  }
  const found = [...parents].filter(([, ppid]) => !parents.has(ppid)).map(([pid]) => pid);
  assert.equal(found.length, 1, `one kernel process serves ${socket}`);
  return found[0];
}

/**
 * Client connections the kernel process `pid` holds on `socket`: its socket fds whose inode
 * /proc/net/unix lists under that path, minus the listener (flag __SO_ACCEPTCON). Other sockets
 * the runtime may hold do not count.
 */
export function kernelConnections(pid: number, socket: string): number {
  const accepted = new Set<string>();
  for (const line of Deno.readTextFileSync("/proc/net/unix").split("\n").slice(1)) {
    const [, , , flags, , , inode, path] = line.trim().split(/\s+/);
    if (path === socket && flags !== "00010000") accepted.add(inode);
  }
  let n = 0;
  for (const fd of Deno.readDirSync(`/proc/${pid}/fd`)) {
    try {
      const inode = /^socket:\[(\d+)\]$/.exec(Deno.readLinkSync(`/proc/${pid}/fd/${fd.name}`));
      if (inode && accepted.has(inode[1])) n++;
    } catch {
      // closed meanwhile
    }
  }
  return n;
}

/** Pids of live (non-zombie) processes whose process group is `pgid`. */
export function groupMembers(pgid: number): number[] {
  const pids: number[] = [];
  for (const entry of Deno.readDirSync("/proc")) {
    if (!/^[0-9]+$/.test(entry.name)) continue;
    try {
      const stat = Deno.readTextFileSync(`/proc/${entry.name}/stat`);
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      if (fields[0] !== "Z" && fields[0] !== "X" && Number(fields[2]) === pgid) {
        pids.push(Number(entry.name));
      }
    } catch {
      // exited meanwhile
    }
  }
  return pids;
}

/** Calls `fetch` every 50 ms until `done` holds for its result (at most `ms`); returns that result. */
export async function pollUntil<T>(
  fetch: () => Promise<T>,
  done: (value: T) => boolean,
  ms = 10000,
): Promise<T> {
  const deadline = Date.now() + ms;
  let value = await fetch();
  while (!done(value)) {
    if (Date.now() >= deadline) {
      throw new Error(`condition not reached within ${ms} ms; last: ${JSON.stringify(value)}`);
    }
    await delay(50);
    value = await fetch();
  }
  return value;
}

/** The JSON-RPC error a client request fails with; a success fails the test. */
export async function mcpError(p: Promise<unknown>): Promise<McpError> {
  try {
    await p;
  } catch (e) {
    if (e instanceof McpError) return e;
    throw e;
  }
  throw new Error("expected a JSON-RPC error");
}

/** UTF-8 byte length of a string, or of the compact JSON of any other value. */
export function byteLength(x: unknown): number {
  return new TextEncoder().encode(typeof x === "string" ? x : JSON.stringify(x)).length;
}

/** Writes `principals` as the sandbox's `$XDG_CONFIG_HOME/shoal/leash.jsonc` (read at kernel start). */
export async function writePolicy(box: Sandbox, principals: Rec): Promise<void> {
  await Deno.mkdir(`${box.dir}/config/shoal`, { recursive: true });
  await Deno.writeTextFile(
    `${box.dir}/config/shoal/leash.jsonc`,
    `// e2e policy\n${JSON.stringify({ principal: principals }, null, 2)}\n`,
  );
}

/** Creates a token with the real CLI in the sandbox's state dir; returns the bearer secret. */
export async function createToken(box: Sandbox, principal: string): Promise<string> {
  const out = await new Deno.Command(`${REPO}/bin/shoal-kernel`, {
    args: [
      "token",
      "create",
      principal,
      principal.replace(/^agent:/, ""),
      "--state-dir",
      `${box.dir}/state/shoal`,
    ],
    env: box.env(),
    clearEnv: true,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  const stderr = new TextDecoder().decode(out.stderr);
  assert.ok(out.success, `token create failed: ${stderr}`);
  return new TextDecoder().decode(out.stdout).trim();
}
