/** Test support: waiting for a PTY's screen. */
import type { RpcConnection } from "../../src/protocol/rpc_client.ts";
import type { Rec } from "./rec.ts";
import { pollUntil } from "./wait.ts";

/** The rows of PTY `ptyId` once one starts with `done` (polled, at most 10 s; throws after). */
export async function screenWhenDone(conn: RpcConnection, ptyId: unknown): Promise<string[]> {
  const read = await pollUntil(
    () => conn.request("pty.read", { pty_id: ptyId }) as Promise<Rec>,
    (r) => (r.screen as string[]).some((row) => row.startsWith("done")),
  );
  return read.screen as string[];
}
