import { readMessages } from "../../protocol/framing.ts";
import { noteActivity } from "../../protocol/idle_work.ts";
import { ClientConnection } from "../rpc/client_connection.ts";
import { dispatch } from "../rpc/dispatch.ts";
import type { Kernel } from "./kernel.ts";

/** How long the accept loop waits after a failed accept before trying again. */
const ACCEPT_RETRY_MS = 100;

/**
 * Accepts connections until the listener closes or `stop` aborts, serving each independently
 * (G-TOPO-4). A connection still in flight when `stop` aborts is closed unserved.
 */
export async function acceptLoop(
  kernel: Kernel,
  listener: Deno.Listener,
  stop?: AbortSignal,
): Promise<void> {
  const stopped = new Promise<null>((resolve) => {
    stop?.addEventListener("abort", () => resolve(null), { once: true });
  });
  let failing = false;
  while (!stop?.aborted) {
    const accepting = listener.accept();
    let conn: Deno.Conn | null;
    try {
      conn = await Promise.race([accepting, stopped]);
    } catch (e) {
      if (e instanceof Deno.errors.BadResource) return;
      // Out of file descriptors and the like: keep serving the connections there are, and
      // accept again once some have closed, instead of dying with every task orphaned.
      if (!failing) kernel.log(`cannot accept connections: ${(e as Error).message}`);
      failing = true;
      await Promise.race([new Promise((resolve) => setTimeout(resolve, ACCEPT_RETRY_MS)), stopped]);
      continue;
    }
    if (conn === null) {
      accepting.then((late) => late.close(), () => {});
      return;
    }
    failing = false;
    serveConnection(kernel, conn);
  }
}

/** Reads bounded frames from one connection and dispatches each request concurrently (W-RPC-4). */
export async function serveConnection(kernel: Kernel, conn: Deno.Conn): Promise<void> {
  const client = new ClientConnection(conn);
  kernel.connections.add(client);
  client.onClose(() => {
    kernel.connections.delete(client);
    kernel.bus.removeSubscriber(client.subscriber);
  });
  try {
    for await (const msg of readMessages(conn, "verbatim")) {
      if (msg.kind === "invalid") client.fail(msg.id, msg.error);
      else if (msg.kind === "request") {
        await client.backlog(); // W-FRAME-8: a peer not reading its responses waits for them
        noteActivity();
        dispatch(kernel, client, msg.id, msg.method, msg.params);
      }
      // Notifications and stray responses are ignored (W-RPC-3).
    }
  } catch {
    // connection reset
  } finally {
    client.close();
  }
}
