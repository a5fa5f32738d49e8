import { ErrorCode, RpcError, type RpcErrorObject } from "../protocol/errors.ts";
import { readMessages } from "../protocol/framing.ts";
import type { RpcId } from "../protocol/rpc.ts";
import { ClientConnection } from "./connection.ts";
import type { Kernel } from "./kernel.ts";
import type { AttachedContext, CallContext, MethodSpec } from "./method.ts";
import { METHODS } from "./methods/table.ts";
import { zodMessage } from "./params.ts";

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
      else if (msg.kind === "request") dispatch(kernel, client, msg.id, msg.method, msg.params);
      // Notifications and stray responses are ignored (W-RPC-3).
    }
  } catch {
    // connection reset
  } finally {
    client.close();
  }
}

/** Turns anything thrown by a handler into a JSON-RPC error object (SPEC §10). */
export function toErrorObject(e: unknown): RpcErrorObject {
  if (e instanceof RpcError) return e.toObject();
  const message = e instanceof Error ? e.message : String(e);
  return { code: ErrorCode.INTERNAL_ERROR, message: `internal error: ${message}` };
}

/** Runs one request through the method table: lookup, attachment, token, params, handler. */
export function dispatch(
  kernel: Kernel,
  client: ClientConnection,
  id: RpcId,
  name: string,
  params: Record<string, unknown>,
): void {
  let pending: unknown;
  try {
    const spec: MethodSpec | undefined = METHODS.get(name);
    if (!spec) {
      throw new RpcError(ErrorCode.METHOD_NOT_FOUND, `method not found: ${name}`, {
        method: name,
      });
    }
    const ctx: CallContext = { kernel, conn: client, attachment: client.attachment };
    if (spec.attach) {
      if (!ctx.attachment) {
        throw new RpcError(ErrorCode.NOT_ATTACHED, `${name} requires session.attach first`);
      }
      kernel.revalidate(client);
    }
    const parsed = spec.params.safeParse(params);
    if (!parsed.success) {
      throw new RpcError(
        ErrorCode.INVALID_PARAMS,
        `invalid params for ${name}: ${zodMessage(parsed.error)}`,
      );
    }
    pending = spec.attach
      ? spec.handler(ctx as AttachedContext, parsed.data as never)
      : spec.handler(ctx, parsed.data as never);
  } catch (e) {
    client.fail(id, toErrorObject(e));
    return;
  }
  Promise.resolve(pending).then(
    (result) => client.respond(id, result),
    (e) => {
      const error = toErrorObject(e);
      if (error.code === ErrorCode.INTERNAL_ERROR) kernel.log(`${name}: ${error.message}`);
      return client.fail(id, error);
    },
  );
}
