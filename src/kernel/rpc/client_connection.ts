import { ErrorCode, type RpcErrorObject } from "../../protocol/errors.ts";
import { FrameWriter } from "../../protocol/frame_writer.ts";
import { FRAME_LIMIT, WRITE_BACKLOG_LIMIT } from "../../protocol/limits.ts";
import { encodeFrame, errorMessage, resultMessage, type RpcId } from "../../protocol/rpc.ts";
import type { Attachment } from "../session/attachment.ts";
import type { EventSubscriber } from "../events/bus.ts";
import type { BusEvent } from "../events/bus_event.ts";

const RESPONSE_TOO_LARGE: RpcErrorObject = {
  code: ErrorCode.INTERNAL_ERROR,
  message: "response too large",
};

/** One client connection to the kernel: its attachment and its single whole-frame writer (W-FRAME-8). */
export class ClientConnection {
  static #nextId = 1;
  /** Bytes of frames queued and not yet written, over every connection. */
  static #allUnwritten = 0;
  /** Kernel-wide connection number, for logs and subscriber identity. */
  readonly id = ClientConnection.#nextId++;
  attachment: Attachment | null = null;
  /** Which events this caller may see (K-EVT-8); set at attach. */
  visible: (event: BusEvent) => boolean = () => true;
  /** The one owner whose stored events of a durable channel this caller may see, if so; set at attach. */
  storedOnly: (channel: string) => string | undefined = () => undefined;
  /** This connection as an event-bus subscriber: pushes are `event` notifications (K-EVT-3). */
  readonly subscriber: EventSubscriber = {
    deliver: (event) => this.#pushEvent(event),
    visible: (event) => this.visible(event),
    storedOnly: (channel) => this.storedOnly(channel),
  };
  #conn: Deno.Conn;
  #writer: FrameWriter;
  #closed = false;
  /** Bytes of frames queued and not yet written (or failed). */
  #unwritten = 0;
  #onClose = new Set<() => void>();
  /**
   * Settles once the last event frame handed to the writer is written: the next event is encoded
   * only then (K-EVT-9). Each subscription delivers one event at a time, but all 64 of a
   * connection's encoded theirs at once, so a peer that never read held 64 frames of up to 64 KB
   * each (20 such connections grew the kernel by 105 MiB); now it holds one, and the others wait
   * as the events their bounded queues already hold.
   */
  #lastEvent: Promise<void> = Promise.resolve();

  constructor(conn: Deno.Conn) {
    this.#conn = conn;
    this.#writer = new FrameWriter(conn);
  }

  /** Whether the connection has closed. */
  get closed(): boolean {
    return this.#closed;
  }

  /** Registers cleanup to run once when the connection closes. */
  onClose(fn: () => void): () => void {
    this.#onClose.add(fn);
    return () => this.#onClose.delete(fn);
  }

  /** Sends a success response (W-RPC-5 bounds it). */
  respond(id: RpcId, result: unknown): Promise<void> {
    return this.#writeResponse(id, resultMessage(id, result));
  }

  /** Sends an error response (W-RPC-5 bounds it: an error may echo what the request carried). */
  fail(id: RpcId, error: RpcErrorObject): Promise<void> {
    return this.#writeResponse(id, errorMessage(id, error));
  }

  /** Pushes an `event` notification (W-RPC-3). */
  notify(method: string, params: unknown): Promise<void> {
    return this.#write(encodeFrame({ jsonrpc: "2.0", method, params }));
  }

  /** Pushes a bus event once the event frames before it are written ({@link #lastEvent}). */
  #pushEvent(event: BusEvent): Promise<void> {
    const pushed = this.#lastEvent.then(() => this.notify("event", event));
    this.#lastEvent = pushed.catch(() => {}); // a frame that failed fails its own delivery only
    return pushed;
  }

  /**
   * Settles once the frames queued for this peer are written, when some are queued and they,
   * or those of all connections, pass {@link WRITE_BACKLOG_LIMIT}; undefined otherwise. The
   * reader awaits it before taking the next request, so a peer that does not read its socket
   * stops its own requests instead of growing the kernel (found by probe13: 300 pipelined
   * `events.read` of 12 MB each, unread, held 3.5 GB), on one connection or on many; a peer
   * that reads waits at most for its own frames.
   */
  backlog(): Promise<void> | undefined {
    if (this.#unwritten === 0) return undefined;
    const total = ClientConnection.#allUnwritten;
    if (this.#unwritten <= WRITE_BACKLOG_LIMIT && total <= WRITE_BACKLOG_LIMIT) return undefined;
    return this.#writer.flushed();
  }

  /** Closes the socket and runs the close callbacks once. */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    try {
      this.#conn.close();
    } catch {
      // already closed
    }
    for (const fn of this.#onClose) fn();
    this.#onClose.clear();
  }

  /** Writes a response; one whose frame passes 16 MiB becomes -32603 instead (W-RPC-5). */
  #writeResponse(id: RpcId, message: unknown): Promise<void> {
    let frame = encodeFrame(message);
    if (frame.length - 1 > FRAME_LIMIT) frame = encodeFrame(errorMessage(id, RESPONSE_TOO_LARGE));
    return this.#write(frame);
  }

  #write(frame: Uint8Array): Promise<void> {
    if (this.#closed) return Promise.resolve();
    this.#unwritten += frame.length;
    ClientConnection.#allUnwritten += frame.length;
    const written = () => {
      this.#unwritten -= frame.length;
      ClientConnection.#allUnwritten -= frame.length;
    };
    return this.#writer.write(frame).then(written, () => {
      written();
      this.close();
    });
  }
}
