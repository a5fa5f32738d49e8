import { ErrorCode, invalidParams, RpcError } from "../protocol/errors.ts";
import { VERSION } from "../protocol/version.ts";
import type { KernelClient } from "./kernel_client.ts";
import { listResources, readResource, TEMPLATES } from "./resources.ts";
import { type RequestContext, RequestServer } from "./request_server.ts";
import { linksAllowed } from "./result.ts";
import type { StdioTransport } from "./stdio_transport.ts";
import { SubscriptionRegistry } from "./subscriptions.ts";
import { TOOLS } from "./tool_schemas.ts";
import { callTool, type ToolContext } from "./tools.ts";

/** The facade's name and version in `initialize` (M-PROTO-1). */
export const SERVER_INFO = { name: "shoal-mcp", version: VERSION };

/** Exactly the advertised capabilities (M-PROTO-1). */
export const CAPABILITIES = {
  tools: { listChanged: false },
  resources: { subscribe: true, listChanged: false },
};

/** The preferred protocol version, answered for any version not in {@link SUPPORTED_VERSIONS}. */
export const PREFERRED_VERSION = "2025-06-18";

/** Protocol versions answered as requested (M-PROTO-1). */
export const SUPPORTED_VERSIONS: readonly string[] = [
  PREFERRED_VERSION,
  "2025-03-26",
  "2024-11-05",
  "2024-10-07",
];

type Params = Record<string, unknown>;

/** The version `initialize` answers for a requested one (M-PROTO-1). */
export function negotiateVersion(requested: unknown): string {
  return typeof requested === "string" && SUPPORTED_VERSIONS.includes(requested)
    ? requested
    : PREFERRED_VERSION;
}

function uriParam(params: Params): string {
  if (typeof params.uri !== "string") throw invalidParams("invalid params: uri must be a string");
  return params.uri;
}

/**
 * The MCP server of the facade: a {@link RequestServer} over our {@link StdioTransport}, with
 * every method served by one dispatcher (M-PROTO-1/2). The MCP SDK's `Server` is not used: it
 * loads its schemas and JSON Schema validator at start-up (about half the facade's start time
 * and a third of its memory), its `initialize` echoes versions newer than SPEC allows, its
 * schema failures answer `-32603` where SPEC wants `-32602`, and `McpError` prefixes every
 * message with "MCP error <code>:".
 */
export class FacadeServer {
  #server: RequestServer;
  readonly subscriptions: SubscriptionRegistry;
  #version = PREFERRED_VERSION;
  #methods: Record<string, (params: Params, context: RequestContext) => Promise<unknown> | unknown>;

  constructor(
    readonly kernel: KernelClient,
    readonly transport: StdioTransport,
    readonly log: (line: string) => void,
  ) {
    this.#server = new RequestServer(
      transport,
      (method, params, context) => this.#dispatch(method, params, context),
      log,
    );
    this.subscriptions = new SubscriptionRegistry(
      kernel,
      (frame) => transport.sendFrame(frame),
      log,
    );
    this.#methods = {
      "initialize": (p) => this.#initialize(p),
      "tools/list": () => ({ tools: TOOLS }),
      "tools/call": (p, context) => callTool(this.#toolContext(p, context), p.name, p.arguments),
      "resources/list": () => listResources(kernel),
      "resources/templates/list": () => ({ resourceTemplates: TEMPLATES }),
      "resources/read": (p) => readResource(kernel, uriParam(p)),
      "resources/subscribe": (p) => this.subscriptions.subscribe(uriParam(p)),
      "resources/unsubscribe": (p) => this.subscriptions.unsubscribe(uriParam(p)),
    };
  }

  /** Starts serving the transport. */
  async start(): Promise<void> {
    await this.#server.start();
  }

  /** The protocol version negotiated by the last `initialize` (the preferred one before it). */
  get version(): string {
    return this.#version;
  }

  async #dispatch(name: string, params: Params, context: RequestContext): Promise<unknown> {
    const method = this.#methods[name];
    if (method === undefined) {
      throw new RpcError(ErrorCode.METHOD_NOT_FOUND, `method not found: ${name}`, {
        method: name,
      });
    }
    return await method(params, context);
  }

  #initialize(params: Params) {
    this.#version = negotiateVersion(params.protocolVersion);
    return { protocolVersion: this.#version, capabilities: CAPABILITIES, serverInfo: SERVER_INFO };
  }

  #toolContext(params: Params, context: RequestContext): ToolContext {
    const meta = params._meta as Params | undefined;
    const token = meta?.progressToken;
    const progress = typeof token === "string" || typeof token === "number"
      ? (progress: number, message: string) =>
        context.notify("notifications/progress", { progressToken: token, progress, message })
      : null;
    return {
      kernel: this.kernel,
      withLinks: linksAllowed(this.#version),
      signal: context.signal,
      progress,
    };
  }
}
