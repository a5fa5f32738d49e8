// The SDK's `./*` export maps `x.js` to a missing `x.js.d.ts`, so each import names its types.
// @ts-types="@modelcontextprotocol/sdk/types"
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
import { ErrorCode } from "../protocol/errors.ts";
import type { StdioTransport } from "./stdio_transport.ts";

/** The abort reason of the requests in flight when the transport closes (no client's cancellation). */
export const TRANSPORT_CLOSED: unique symbol = Symbol("transport closed");

/** What a method handler gets besides its params. */
export interface RequestContext {
  /**
   * Aborted when the client cancels the request, or with reason {@link TRANSPORT_CLOSED} when
   * the transport closes.
   */
  signal: AbortSignal;
  /** Sends a notification to the client unless the request was aborted. */
  notify(method: string, params: Record<string, unknown>): Promise<void>;
}

/** Serves one request: its result, or a thrown error with `code`, `message` and `data`. */
export type Handler = (
  method: string,
  params: Record<string, unknown>,
  context: RequestContext,
) => Promise<unknown>;

type Id = string | number;

/**
 * The JSON-RPC server side of the facade (M-PROTO-2): each request from the transport goes to
 * the handler and is answered with its result or its error; `ping` is answered here; a
 * `notifications/cancelled` aborts its request, which is then not answered; closing the
 * transport aborts every request in flight. A thrown error without an integer `code` answers
 * `-32603`. (This is what the MCP SDK's `Protocol` does for a server that sends no requests,
 * without loading the SDK's schema and validator modules at start-up.)
 */
export class RequestServer {
  #inFlight = new Map<Id, AbortController>();

  constructor(
    readonly transport: StdioTransport,
    readonly handle: Handler,
    readonly log: (line: string) => void,
  ) {}

  /** Starts reading requests from the transport. */
  async start(): Promise<void> {
    this.transport.onmessage = (message) => this.#receive(message);
    this.transport.onerror = (e) => this.log(`shoal-mcp: ${e.message}`);
    this.transport.onclose = () => {
      for (const controller of this.#inFlight.values()) controller.abort(TRANSPORT_CLOSED);
      this.#inFlight.clear();
    };
    await this.transport.start();
  }

  #receive(message: JSONRPCMessage): void {
    if (!("method" in message)) return;
    if ("id" in message) {
      this.#request(message.id, message.method, message.params ?? {});
    } else if (message.method === "notifications/cancelled") {
      // The transport has dropped the response already: the request is cancelled (M-PROG-3).
      this.#inFlight.get(message.params?.requestId as Id)?.abort("cancelled by the client");
    }
  }

  async #request(id: Id, method: string, params: Record<string, unknown>): Promise<void> {
    const controller = new AbortController();
    this.#inFlight.set(id, controller);
    const context: RequestContext = {
      signal: controller.signal,
      notify: async (method, params) => {
        if (!controller.signal.aborted) {
          await this.transport.send({ jsonrpc: "2.0", method, params });
        }
      },
    };
    let reply: JSONRPCMessage;
    try {
      const result = method === "ping" ? {} : await this.handle(method, params, context);
      reply = { jsonrpc: "2.0", id, result: result as Record<string, unknown> };
    } catch (e) {
      const error = (e ?? {}) as { code?: unknown; message?: string; data?: unknown };
      reply = {
        jsonrpc: "2.0",
        id,
        error: {
          code: Number.isSafeInteger(error.code) ? error.code as number : ErrorCode.INTERNAL_ERROR,
          message: error.message ?? "Internal error",
          ...(error.data !== undefined && { data: error.data }),
        },
      };
    }
    if (this.#inFlight.get(id) === controller) this.#inFlight.delete(id);
    if (controller.signal.aborted) return;
    try {
      await this.transport.send(reply);
    } catch (e) {
      this.log(`shoal-mcp: failed to send response: ${e}`);
    }
  }
}
