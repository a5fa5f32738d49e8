import type { RpcErrorObject } from "../protocol/errors.ts";
import type { StdioTransport } from "./stdio_transport.ts";
import { after } from "../protocol/timers.ts";

/** At most this many facade requests wait for the client at once; more are refused at once. */
export const MAX_PENDING_CLIENT_REQUESTS = 16;

/** How long the facade waits for the client to answer one request (a human filling a form). */
export const CLIENT_REQUEST_MS = 10 * 60 * 1000;

/** How a request to the client ended: its result, its error, or no answer (cancelled, timed out, refused). */
export type ClientReply =
  | { ok: true; result: unknown }
  | { ok: false; error: RpcErrorObject | null };

/** The reason, as the client is told it, a request's signal aborted with to withdraw it. */
export class Withdrawal {
  constructor(readonly reason: string) {}
}

/**
 * The facade's own requests to the MCP client (M-ELICIT-2 sends `elicitation/create`): each gets
 * an id of its own (`shoal-N`), waits in a bounded pending map for the client's response at most
 * {@link CLIENT_REQUEST_MS}, and is withdrawn with `notifications/cancelled` when its caller's
 * signal aborts or the time runs out. The transport closing ends every wait with no answer.
 */
export class ClientRequests {
  #next = 1;
  #pending = new Map<string, (reply: ClientReply) => void>();

  constructor(readonly transport: StdioTransport, readonly timeoutMs = CLIENT_REQUEST_MS) {
    transport.onresponse = (id, result, error) => {
      const settle = this.#pending.get(String(id));
      if (settle === undefined) return; // unknown, or already cancelled
      settle(error === undefined ? { ok: true, result } : { ok: false, error });
    };
    transport.finished.then(() => {
      for (const settle of [...this.#pending.values()]) settle({ ok: false, error: null });
    });
  }

  /** Sends `method` to the client and waits for its answer within the bounds above. */
  request(
    method: string,
    params: Record<string, unknown>,
    signal: AbortSignal,
  ): Promise<ClientReply> {
    if (signal.aborted || this.transport.isClosed) {
      return Promise.resolve({ ok: false, error: null });
    }
    if (this.#pending.size >= MAX_PENDING_CLIENT_REQUESTS) {
      return Promise.resolve({ ok: false, error: null });
    }
    const id = `shoal-${this.#next++}`;
    return new Promise<ClientReply>((resolve) => {
      const withdraw = (reason: string) => {
        settle({ ok: false, error: null });
        this.transport.send({
          jsonrpc: "2.0",
          method: "notifications/cancelled",
          params: { requestId: id, reason },
        });
      };
      const onAbort = () =>
        withdraw(
          signal.reason instanceof Withdrawal
            ? signal.reason.reason
            : "the tool call was cancelled",
        );
      const stopTimer = after(this.timeoutMs, () => withdraw("no answer in time"));
      const settle = (reply: ClientReply) => {
        if (!this.#pending.delete(id)) return;
        stopTimer();
        signal.removeEventListener("abort", onAbort);
        resolve(reply);
      };
      this.#pending.set(id, settle);
      signal.addEventListener("abort", onAbort);
      this.transport.send({ jsonrpc: "2.0", id, method, params });
    });
  }
}
