/**
 * Test helpers for principals: policy files, tokens made by the real `shoal-kernel token` CLI,
 * the approval CLI as a subprocess, and event collection on a kernel connection.
 */
import { RpcError } from "../../src/protocol/errors.ts";
import type { RpcConnection } from "../../src/protocol/rpc_client.ts";
import { type Sandbox, waitUntil } from "../mcp/_facade.ts";
import { KERNEL_BIN } from "./_kernel.ts";

/** A JSON object. */
export type Rec = Record<string, unknown>;

/** The local human principal of this test process (G-TRUST-2). */
export const LOCAL_HUMAN = `uid:${Deno.uid()}`;

/** The error a request fails with; a success fails the test. */
export async function rpcError(p: Promise<unknown>): Promise<RpcError> {
  try {
    await p;
  } catch (e) {
    if (e instanceof RpcError) return e;
    throw e;
  }
  throw new Error("expected an RPC error");
}

/** Writes a JSONC Leash file (with a comment and trailing commas) into the sandbox; returns its path. */
export async function writePolicy(box: Sandbox, principals: Rec): Promise<string> {
  const path = `${box.dir}/leash.jsonc`;
  const body = JSON.stringify({ principal: principals }, null, 2).replace(/\n(\s*)}/g, ",\n$1}");
  await Deno.writeTextFile(path, `// test policy\n${body}\n`);
  return path;
}

/** What a CLI run printed. */
export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs `bin/shoal-kernel args` as a process in the sandbox environment. */
export async function kernelCli(box: Sandbox, args: string[]): Promise<CliResult> {
  const out = await new Deno.Command(KERNEL_BIN, {
    args,
    env: box.env(),
    clearEnv: true,
    cwd: box.dir,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  const text = (b: Uint8Array) => new TextDecoder().decode(b);
  return { code: out.code, stdout: text(out.stdout), stderr: text(out.stderr) };
}

/** Creates a token with `shoal-kernel token create` in the sandbox's state dir; returns id and secret. */
export async function createToken(
  box: Sandbox,
  principal: string,
  extra: string[] = [],
): Promise<{ id: string; secret: string }> {
  const r = await kernelCli(box, ["token", "create", principal, "test", ...extra]);
  const id = /created ([0-9a-f]{16})/.exec(r.stderr)?.[1];
  if (r.code !== 0 || !id) throw new Error(`token create failed: ${r.stderr}`);
  return { id, secret: r.stdout.trim() };
}

/** Every `event` push a connection receives, in arrival order. */
export function collectEvents(conn: RpcConnection): Rec[] {
  const events: Rec[] = [];
  conn.onNotification = (method, params) => {
    if (method === "event") events.push(params);
  };
  return events;
}

/** Waits (bounded) until `events` holds one matching `match`; returns it. */
export async function waitForEvent(events: Rec[], match: (e: Rec) => boolean): Promise<Rec> {
  if (!await waitUntil(() => events.some(match), 10000)) {
    throw new Error(`event not seen; got ${JSON.stringify(events)}`);
  }
  return events.find(match)!;
}

/** Payloads of the collected events of one channel. */
export function payloads(events: Rec[], channel: string): Rec[] {
  return events.filter((e) => e.channel === channel).map((e) => e.payload as Rec);
}
