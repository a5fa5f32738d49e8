// The SDK's `./*` export maps `x.js` to a missing `x.js.d.ts`, so each import names its types.
// @ts-types="@modelcontextprotocol/sdk/shared/transport"
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
// @ts-types="@modelcontextprotocol/sdk/types"
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
import { ErrorCode, type RpcErrorObject } from "../protocol/errors.ts";
import { type ByteWriter, FrameWriter } from "../protocol/frame_writer.ts";
import { type ByteReader, readMessageBatches } from "../protocol/framing.ts";
import { noteActivity } from "../protocol/idle_work.ts";
import { errorMessage, type Incoming } from "../protocol/rpc.ts";
import { validMeta } from "./request_meta.ts";
import { after } from "../protocol/timers.ts";
import { FRAME_LIMIT } from "../protocol/limits.ts";

/** A client request id as it appeared on the wire (W-RPC-2, MCP rule). */
type ClientId = string | number;

/**
 * Bytes of frames queued for stdout and not yet written past which no more client frames are
 * taken until they are: one frame at the limit.
 */
export const STDOUT_BACKLOG_LIMIT = FRAME_LIMIT;

/** The one client notification the facade acts on (M-PROTO-2); every other one is ignored. */
const CANCELLED = "notifications/cancelled";

const encoder = new TextEncoder();

function idKey(id: ClientId): string {
  return `${typeof id}:${id}`;
}

/**
 * The facade's stdio transport for its `RequestServer`: bounded newline framing of stdin
 * (W-FRAME-2..7), envelope errors answered here without reaching the server (W-RPC-1/2), and
 * whole-frame writes to stdout under one lock (W-FRAME-8).
 *
 * Incoming request ids are replaced by internal ids (1, 2, …) before the server sees them and
 * restored on the way out, so two requests that reuse an id stay apart; the mapping is also the
 * in-flight set that a cancelled request is removed from, so its late response is dropped
 * (M-PROG-3).
 */
export class StdioTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;
  /**
   * When it returns a promise, no more client frames are taken until it settles: the kernel
   * connection has more queued for a kernel that does not read than it may hold (M-START-5).
   */
  inputGate: (() => Promise<void> | null) | null = null;
  /** Receives the client's responses to the facade's own requests (M-ELICIT-2). */
  onresponse?: (id: string | number, result: unknown, error: RpcErrorObject | undefined) => void;

  #writer: FrameWriter;
  #closed = false;
  #nextId = 1;
  #clientIds = new Map<number, ClientId>();
  /**
   * The internal ids in flight under each client id: one, or several in arrival order when the
   * client reused an id before its request was answered.
   */
  #internalIds = new Map<string, number | Set<number>>();
  #drained: (() => void) | null = null;
  /** Bytes of frames queued for stdout and not yet written (or failed). */
  #unwritten = 0;
  #finished: Promise<void>;
  #finish!: () => void;

  /**
   * @param input where frames are read from
   * @param output where frames are written to
   * @param drainMs how long requests in flight at input EOF may still be answered
   */
  constructor(
    readonly input: ByteReader,
    output: ByteWriter,
    readonly drainMs: number,
  ) {
    this.#writer = new FrameWriter(output);
    this.#finished = new Promise((resolve) => this.#finish = resolve);
  }

  /** Resolves once the transport has closed (input EOF drained, write failure or `close()`). */
  get finished(): Promise<void> {
    return this.#finished;
  }

  /** Whether the transport has closed. */
  get isClosed(): boolean {
    return this.#closed;
  }

  /** Starts reading frames; returns at once. */
  start(): Promise<void> {
    this.#readLoop();
    return Promise.resolve();
  }

  /**
   * Writes one message as one whole frame; responses get their client id back (in place: a
   * response is the sender's to give away).
   */
  send(message: JSONRPCMessage): Promise<void> {
    if (this.#closed) return Promise.resolve();
    if ("id" in message && !("method" in message)) {
      const internal = message.id as number;
      const clientId = this.#clientIds.get(internal);
      // No mapping: the request was cancelled, and its response is never sent.
      if (clientId === undefined) return Promise.resolve();
      this.#forget(internal);
      message.id = clientId;
      return this.#write(message) ?? Promise.resolve();
    }
    return this.#write(message) ?? Promise.resolve();
  }

  /**
   * Writes one frame already encoded (ending in a newline) behind the frames before it; returns
   * nothing when it was written within the call, else a promise settling once it is written.
   */
  sendFrame(frame: Uint8Array): Promise<void> | undefined {
    if (this.#closed) return undefined;
    return this.#writeFrame(frame);
  }

  /** Closes the transport once; `onclose` runs and `finished` resolves. */
  close(): Promise<void> {
    if (!this.#closed) {
      this.#closed = true;
      this.onclose?.();
      this.#finish();
    }
    return Promise.resolve();
  }

  #write(message: unknown): Promise<void> | undefined {
    // What the facade sends holds no bigint and no JsonText (its values come from JSON.parse
    // and MCP ids are strings or numbers), so the plain stringify writes what encodeFrame's
    // replacer would, without a call into it per value.
    return this.#writeFrame(encoder.encode(JSON.stringify(message) + "\n"));
  }

  #writeFrame(frame: Uint8Array): Promise<void> | undefined {
    // A failed write means the client is gone (M-CLI-3).
    const queued = this.#writer.put(frame);
    if (queued === undefined) return undefined;
    this.#unwritten += frame.length;
    const written = () => {
      this.#unwritten -= frame.length;
    };
    return queued.then(written, () => {
      written();
      this.close();
    });
  }

  #forget(internal: number): void {
    const clientId = this.#clientIds.get(internal);
    this.#clientIds.delete(internal);
    if (clientId !== undefined) {
      // Only this request leaves: another one in flight under the same id (the client reused
      // it) stays reachable by a cancellation (M-PROG-3), which found none once either answered.
      const key = idKey(clientId);
      const held = this.#internalIds.get(key);
      if (held === internal) this.#internalIds.delete(key);
      if (held instanceof Set) {
        held.delete(internal);
        if (held.size === 1) this.#internalIds.set(key, held.values().next().value!);
      }
    }
    if (this.#clientIds.size === 0) this.#drained?.();
  }

  #reply(id: ClientId | null, error: RpcErrorObject): void {
    this.#write(errorMessage(id, error));
  }

  async #readLoop(): Promise<void> {
    try {
      reading: for await (const batch of readMessageBatches(this.input, "mcp")) {
        for (const msg of batch) {
          // A client that does not read its stdout (a non-blocking one: a blocking write holds
          // the whole facade) stops its own requests here instead of growing the facade by the
          // answers it never reads (probe67: 20,000 unread tools/list held +234 MiB).
          if (this.#unwritten > STDOUT_BACKLOG_LIMIT) await this.#writer.flushed();
          const gate = this.inputGate?.();
          if (gate) await gate;
          if (this.#closed) break reading;
          this.#receive(msg);
        }
      }
    } catch (e) {
      this.onerror?.(e instanceof Error ? e : new Error(String(e)));
    }
    await this.#drain();
    await this.#flushed();
    await this.close();
  }

  /**
   * Waits, at most `drainMs`, for the frames queued for stdout to be written: a client that
   * closed stdin and never reads its (non-blocking) stdout kept the facade, and its kernel
   * connections, for as long as it lived (M-CLI-3 wants the facade to exit).
   */
  #flushed(): Promise<void> {
    return this.#atMostDrain(this.#writer.flushed());
  }

  /** Waits, at most `drainMs`, for requests in flight at EOF to be answered. */
  #drain(): Promise<void> {
    if (this.#clientIds.size === 0 || this.#closed) return Promise.resolve();
    return this.#atMostDrain(new Promise<void>((resolve) => this.#drained = resolve));
  }

  /** Waits for `work` to settle, at most `drainMs`. */
  async #atMostDrain(work: Promise<unknown>): Promise<void> {
    let stopTimer = () => {};
    await Promise.race([
      work,
      new Promise<void>((resolve) => stopTimer = after(this.drainMs, resolve)),
    ]);
    stopTimer();
  }

  #receive(msg: Incoming): void {
    noteActivity();
    switch (msg.kind) {
      case "invalid":
        this.#reply(msg.id as ClientId | null, msg.error);
        return;
      case "response":
        if (typeof msg.id === "string" || typeof msg.id === "number") {
          this.onresponse?.(msg.id, msg.result, msg.error);
        }
        return;
      case "notification":
        this.#notification(msg.method, msg.params);
        return;
      case "request":
        this.#request(msg.id as ClientId, msg.method, msg.params);
    }
  }

  #request(clientId: ClientId, method: string, params: Record<string, unknown>): void {
    if (!validMeta(params)) {
      this.#reply(clientId, {
        code: ErrorCode.INVALID_PARAMS,
        message: "invalid params: malformed _meta",
      });
      return;
    }
    const internal = this.#nextId++;
    this.#clientIds.set(internal, clientId);
    const key = idKey(clientId);
    const held = this.#internalIds.get(key);
    if (held === undefined) this.#internalIds.set(key, internal);
    else if (held instanceof Set) held.add(internal);
    else this.#internalIds.set(key, new Set([held, internal]));
    this.#deliver({ jsonrpc: "2.0", id: internal, method, params });
  }

  #notification(method: string, params: Record<string, unknown>): void {
    if (method !== CANCELLED) return;
    const requestId = params.requestId;
    if (typeof requestId !== "string" && !Number.isSafeInteger(requestId)) return;
    const held = this.#internalIds.get(idKey(requestId as ClientId));
    if (held === undefined) return; // unknown or already answered
    // Forgetting the id drops the response, so the request is cancelled whatever else the
    // notification holds (a null reason, a malformed _meta): M-PROG-3 keys it by id alone,
    // and so cancels every request in flight under it.
    for (const internal of held instanceof Set ? [...held] : [held]) {
      this.#forget(internal);
      this.#deliver({ jsonrpc: "2.0", method, params: { requestId: internal } });
    }
  }

  #deliver(message: JSONRPCMessage): void {
    try {
      this.onmessage?.(message);
    } catch (e) {
      this.onerror?.(e instanceof Error ? e : new Error(String(e)));
    }
  }
}
