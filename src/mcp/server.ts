import { ErrorCode, invalidParams, RpcError } from "../protocol/errors.ts";
import { VERSION } from "../protocol/version.ts";
import { askInClient } from "./client_approval.ts";
import { cutUtf8 } from "../protocol/utf8.ts";
import { ClientRequests } from "./client_requests.ts";
import type { KernelClient } from "./kernel_client.ts";
import { McpTasks } from "./mcp_tasks.ts";
import { listResources, readResource, TEMPLATES } from "./resources.ts";
import { type RequestContext, RequestServer } from "./request_server.ts";
import { linksAllowed } from "./result.ts";
import type { StdioTransport } from "./stdio_transport.ts";
import { SubscriptionRegistry } from "./subscriptions.ts";
import { toolsFor } from "./tool_schemas.ts";
import { callTool, type ToolContext } from "./tools.ts";

/** An unknown method is named in the `-32601` message by at most this many bytes. */
export const SHOWN_METHOD_BYTES = 100;

/** The facade's name and version in `initialize` (M-PROTO-1). */
export const SERVER_INFO = { name: "shoal-mcp", version: VERSION };

/** The one-line `serverInfo.description` under {@link TASKS_VERSION} (M-META-1). */
export const SERVER_DESCRIPTION =
  "Runs bash for agents in a shared session, judged by a policy, with approvals and results by reference.";

/** Exactly the advertised capabilities (M-PROTO-1). */
export const CAPABILITIES = {
  tools: { listChanged: false },
  resources: { subscribe: true, listChanged: false },
};

/** The tasks capability, declared under {@link TASKS_VERSION} only (M-TASKS-1). */
export const TASKS_CAPABILITY = { list: {}, cancel: {}, requests: { tools: { call: {} } } };

/** The preferred protocol version, answered for any version not in {@link SUPPORTED_VERSIONS}. */
export const PREFERRED_VERSION = "2025-11-25";

/** The version that brings MCP tasks and the server description (M-TASKS-1, M-META-1). */
export const TASKS_VERSION = "2025-11-25";

/** Protocol versions answered as requested (M-PROTO-1). */
export const SUPPORTED_VERSIONS: readonly string[] = [
  PREFERRED_VERSION,
  "2025-06-18",
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

/** Whether initialize's client capabilities allow form-mode elicitation (an empty object means form). */
function formElicitation(capabilities: unknown): boolean {
  if (typeof capabilities !== "object" || capabilities === null) return false;
  const elicitation = (capabilities as Params).elicitation;
  if (typeof elicitation !== "object" || elicitation === null || Array.isArray(elicitation)) {
    return false;
  }
  const modes = elicitation as Params;
  return Object.keys(modes).length === 0 || (typeof modes.form === "object" && modes.form !== null);
}

/** The source a `shoal_exec` call sends (the plan of its `-32011` holds exactly it), else undefined. */
function execSrc(params: Params): string | undefined {
  const args = params.arguments as Params | undefined;
  return params.name === "shoal_exec" && typeof args?.src === "string" ? args.src : undefined;
}

/**
 * A list answered in one page without `nextCursor` (M-TOOL-1, M-RES-1/2): any `cursor` is one
 * never issued, which MCP answers with -32602, as `tasks/list` does (M-TASKS-1).
 */
function onePage<T>(params: Params, list: () => T): T {
  if (params.cursor !== undefined) throw invalidParams("invalid cursor: this list has one page");
  return list();
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
  /** Whether `initialize` came: before it no version, and so no tasks, was negotiated. */
  #initialized = false;
  /** Whether the client declared form-mode elicitation at `initialize` (M-ELICIT-2). */
  #elicits = false;
  readonly #client: ClientRequests;
  readonly #tasks: McpTasks;
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
    // A kernel that does not read what it is sent stops the reading of stdin (M-START-5).
    transport.inputGate = () => kernel.backlog();
    this.#client = new ClientRequests(transport);
    this.#tasks = new McpTasks((method, params) => {
      transport.send({ jsonrpc: "2.0", method, params }).catch(() => {});
    }, () => this.#withTasks);
    this.#methods = {
      "initialize": (p) => this.#initialize(p),
      "tools/list": (p) => onePage(p, () => ({ tools: toolsFor(this.#withTasks) })),
      "tools/call": (p, context) => this.#callTool(p, context),
      "tasks/get": (p) => this.#tasks.get(p.taskId),
      "tasks/list": (p) => this.#tasks.list(p.cursor),
      "tasks/cancel": (p, context) => this.#tasks.cancel(this.#toolContext(p, context), p.taskId),
      "tasks/result": (p, context) => this.#tasks.result(p.taskId, context.signal),
      "resources/list": (p) => onePage(p, () => listResources(kernel)),
      "resources/templates/list": (p) => onePage(p, () => ({ resourceTemplates: TEMPLATES })),
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
    // The tasks/* methods exist only when tasks were negotiated (M-TASKS-1). Own members only:
    // `constructor` or `toString` would find what every object inherits, and answer with it.
    const known = Object.hasOwn(this.#methods, name) &&
      !(name.startsWith("tasks/") && !this.#withTasks);
    const method = known ? this.#methods[name] : undefined;
    if (method === undefined) {
      // data.method names it whole (M-PROTO-2); the message only by a preview: naming a long
      // method twice made the answer to a 9 MiB one an 18 MiB frame, over the limit (W-FRAME-2).
      const shown = cutUtf8(name, SHOWN_METHOD_BYTES);
      throw new RpcError(ErrorCode.METHOD_NOT_FOUND, `method not found: ${shown}`, {
        method: name,
      });
    }
    return await method(params, context);
  }

  /**
   * Whether MCP tasks were negotiated (M-TASKS-1). Not before `initialize`: a task created then
   * went on announcing its status after an `initialize` that negotiated a version without tasks.
   */
  get #withTasks(): boolean {
    return this.#initialized && this.#version === TASKS_VERSION;
  }

  #initialize(params: Params) {
    this.#initialized = true;
    this.#version = negotiateVersion(params.protocolVersion);
    this.#elicits = formElicitation(params.capabilities);
    if (!this.#withTasks) {
      return {
        protocolVersion: this.#version,
        capabilities: CAPABILITIES,
        serverInfo: SERVER_INFO,
      };
    }
    return {
      protocolVersion: this.#version,
      capabilities: { ...CAPABILITIES, tasks: TASKS_CAPABILITY },
      serverInfo: { ...SERVER_INFO, description: SERVER_DESCRIPTION },
    };
  }

  /** `tools/call`, as a task when tasks were negotiated and the call carries `task` (M-TASKS-1). */
  #callTool(params: Params, context: RequestContext) {
    const ctx = this.#toolContext(params, context);
    if (this.#withTasks && params.task !== undefined) {
      if (typeof params.task !== "object" || params.task === null || Array.isArray(params.task)) {
        throw invalidParams("invalid params: task must be an object");
      }
      // The SDK 1.32.2 TaskMetadataSchema: `ttl` is an optional number (a wrong type is -32602).
      const ttl = (params.task as Params).ttl;
      if (ttl !== undefined && typeof ttl !== "number") {
        throw invalidParams("invalid params: task.ttl must be a number");
      }
      return this.#tasks.create(ctx, params.name, params.arguments);
    }
    return callTool(ctx, params.name, params.arguments);
  }

  /** Whether the kernel attachment lets this facade decide its plans in the client (M-ELICIT-1). */
  #attachmentApproves(): boolean {
    const caps = this.kernel.attachment?.caps as Params | undefined;
    return caps?.approve_in_client === true;
  }

  #toolContext(params: Params, context: RequestContext): ToolContext {
    const meta = params._meta as Params | undefined;
    const token = meta?.progressToken;
    const started = Date.now();
    let sent = 0;
    // strictly increasing over the whole call (M-PROG-2): the human's wait, then the run's slices
    const progress = typeof token === "string" || typeof token === "number"
      ? (value: number, message: string) => {
        sent = Math.max(value, sent + 1);
        return context.notify("notifications/progress", {
          progressToken: token,
          progress: sent,
          message,
        });
      }
      : null;
    return {
      kernel: this.kernel,
      withLinks: linksAllowed(this.#version),
      signal: context.signal,
      progress,
      askApproval: this.#elicits
        ? (planRef) =>
          this.#attachmentApproves()
            ? askInClient(
              this.kernel,
              this.#client,
              planRef,
              context.signal,
              execSrc(params),
              this.#version,
              progress && ((message) => progress(Date.now() - started, message)),
            )
            : Promise.resolve(null)
        : null,
    };
  }
}
