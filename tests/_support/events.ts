/** Test support: collecting the `event` pushes a kernel connection receives. */
import type { RpcConnection } from "../../src/protocol/rpc_client.ts";
import type { Rec } from "./rec.ts";
import { waitUntil } from "./wait.ts";

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
