import { RpcError, type RpcErrorObject } from "./errors.ts";
import { type ByteWriter, FrameWriter } from "./frame_writer.ts";
import { type EventValues, eventValues } from "./event_frame.ts";
import { type ByteReader, LineFramer } from "./framing.ts";
import { decodeFrame, encodeFrame, exactResult } from "./rpc.ts";
import { FRAME_LIMIT, READ_CHUNK, REPLY_NESTING_LIMIT } from "./limits.ts";

/** Raised for requests that cannot complete because the connection closed. */
export class ConnectionClosedError extends Error {
  constructor(message = "connection closed") {
    super(message);
    this.name = "ConnectionClosedError";
  }
}

/**
 * Raised for a request whose frame would pass the 16 MiB limit (W-FRAME-2): the peer would answer
 * it with id null (W-FRAME-4), so nothing would ever settle it.
 */
export class OversizeRequestError extends Error {
  constructor(method: string, bytes: number) {
    super(`the ${method} request is ${bytes} bytes, over the 16 MiB frame limit`);
    this.name = "OversizeRequestError";
  }
}

/**
 * Receives notifications (for the kernel: `event`) pushed on a connection. A returned promise
 * holds back reading the connection until it settles (frames already read are still handed over
 * first, in order), so a slow consumer backs up to the peer.
 */
export type NotificationHandler = (
  method: string,
  params: Record<string, unknown>,
) => void | Promise<void>;

/**
 * Receives the kernel `event` pushes whose values can be copied as they came (see
 * {@link eventValues}), instead of {@link NotificationHandler} getting them decoded; a returned
 * promise holds back reading as there. The views are valid only during the call.
 */
export type EventValuesHandler = (event: EventValues) => void | Promise<void>;

/** A duplex byte stream a connection runs over: a Unix socket, or the stdio of a relay process. */
export interface ByteStream extends ByteReader, ByteWriter {
  close(): void;
}

interface Pending {
  resolve: (value: unknown) => void;
  reject: (reason: unknown) => void;
  /** Whether its result keeps the numbers JSON.parse would change (see {@link exactResult}). */
  exact: boolean;
}

/**
 * A JSON-RPC client over one connection to the kernel: one demultiplexer matching responses to
 * requests by id, whole-frame writes under one lock, bounded frame reads.
 */
export class RpcConnection {
  #conn: ByteStream;
  #pending = new Map<number, Pending>();
  #nextId = 1;
  #writer: FrameWriter;
  #closed = false;
  /** Bytes of frames queued for the peer and not yet written (or failed). */
  #unwritten = 0;
  #done: Promise<void>;
  /** Called for each notification frame. */
  onNotification: NotificationHandler = () => {};
  /** When set, called for the `event` pushes it can take undecoded (the rest go to onNotification). */
  onEventValues: EventValuesHandler | null = null;

  /** A connection over `conn`, which it reads until it ends and closes when it closes. */
  constructor(conn: ByteStream) {
    this.#conn = conn;
    // A request leaves at once, before the caller's turn goes on (to its next read, say).
    this.#writer = new FrameWriter(conn, true);
    this.#done = this.#readLoop();
  }

  /** Connects to the socket at `path`. */
  static async connect(path: string): Promise<RpcConnection> {
    const conn = await Deno.connect({ transport: "unix", path });
    return new RpcConnection(conn);
  }

  /** Whether the connection has closed. */
  get isClosed(): boolean {
    return this.#closed;
  }

  /** Bytes of frames queued for the peer and not yet written: what a peer not reading leaves here. */
  get unwritten(): number {
    return this.#unwritten;
  }

  /** Resolves once every frame queued so far has been written, or has failed. */
  flushed(): Promise<void> {
    return this.#writer.flushed();
  }

  /** Resolves once the connection has closed and every pending request was rejected. */
  get closed(): Promise<void> {
    return this.#done;
  }

  /**
   * Sends a request and resolves with its result; kernel errors reject as {@link RpcError}.
   * With `exact`, numbers a double cannot hold (past 2^53, past its range, -0) come as RawJSON
   * of the kernel's text (W-NUM-1), which JSON.stringify writes back as they were.
   */
  request(
    method: string,
    params: Record<string, unknown> = {},
    exact = false,
  ): Promise<unknown> {
    if (this.#closed) return Promise.reject(new ConnectionClosedError());
    const id = this.#nextId++;
    const frame = encodeFrame({ jsonrpc: "2.0", id, method, params });
    if (frame.length - 1 > FRAME_LIMIT) {
      return Promise.reject(new OversizeRequestError(method, frame.length - 1));
    }
    const reply = new Promise<unknown>((resolve, reject) => {
      this.#pending.set(id, { resolve, reject, exact });
    });
    this.#write(frame).catch(() => this.close());
    return reply;
  }

  /** Writes raw bytes as they are (for tests of the peer's framing). */
  writeRaw(bytes: Uint8Array): Promise<void> {
    return this.#write(bytes);
  }

  /** Closes the connection; pending requests reject with {@link ConnectionClosedError}. */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    try {
      this.#conn.close();
    } catch {
      // already closed by the peer
    }
    this.#rejectAll();
  }

  #write(bytes: Uint8Array): Promise<void> {
    const written = this.#writer.write(bytes);
    this.#unwritten += bytes.length;
    const settled = () => {
      this.#unwritten -= bytes.length;
    };
    written.then(settled, settled);
    return written;
  }

  #rejectAll(): void {
    for (const p of this.#pending.values()) p.reject(new ConnectionClosedError());
    this.#pending.clear();
  }

  /**
   * Reads frames as `readMessageBatches` does, but without its generator's promises per read, and
   * offers each frame to {@link onEventValues} before decoding it. Frames are views of the read
   * buffer (LineFramer), all handled before the next read reuses it.
   */
  async #readLoop(): Promise<void> {
    const framer = new LineFramer();
    const buf = new Uint8Array(READ_CHUNK);
    try {
      while (true) {
        const n = await this.#conn.read(buf);
        if (n === null) return;
        // Every frame of one read is handled before waiting on the consumer, so a burst of
        // notifications reaches it in one turn (and leaves the facade in one stdout write).
        let consumed: void | Promise<void> = undefined;
        for (const frame of framer.push(buf.subarray(0, n))) {
          // An oversize or malformed frame from the peer ends the connection (M-START-4).
          if (frame.kind === "oversize") return;
          const event = this.onEventValues && eventValues(frame.bytes, REPLY_NESTING_LIMIT);
          if (event) {
            consumed = this.onEventValues!(event) ?? consumed;
            continue;
          }
          const msg = decodeFrame(frame.bytes, "mcp", REPLY_NESTING_LIMIT);
          if (msg.kind === "invalid") return;
          if (msg.kind === "notification") {
            consumed = this.onNotification(msg.method, msg.params) ?? consumed;
          } else if (msg.kind === "response" && typeof msg.id === "number") {
            const exact = msg.error === undefined && this.#pending.get(msg.id)?.exact;
            this.#settle(
              msg.id,
              exact ? exactResult(frame.bytes, msg.result) : msg.result,
              msg.error,
            );
          }
        }
        if (consumed !== undefined) await consumed;
      }
    } catch {
      // reset by peer: treated as a close
    } finally {
      this.close();
    }
  }

  #settle(id: number, result: unknown, error: RpcErrorObject | undefined): void {
    const p = this.#pending.get(id);
    if (!p) return;
    this.#pending.delete(id);
    if (error) p.reject(new RpcError(error.code, error.message, error.data));
    else p.resolve(result);
  }
}
