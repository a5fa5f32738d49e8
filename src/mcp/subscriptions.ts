import { ErrorCode, invalidParams, quotaExceeded, RpcError } from "../protocol/errors.ts";
import { MAX_SUBSCRIPTIONS } from "../protocol/limits.ts";
import type { RpcConnection } from "../protocol/rpc_client.ts";
import { errorText } from "./config.ts";
import type { KernelClient } from "./kernel_client.ts";
import { parseResourceUri } from "./resource_uri.ts";
import { updateFrames } from "./update_frame.ts";
import { after } from "../protocol/timers.ts";
import { noteActivity } from "../protocol/idle_work.ts";
import { canonicalNumber } from "../protocol/refs.ts";
import { terminalJson } from "../protocol/unshowable.ts";
import { cutUtf8 } from "../protocol/utf8.ts";

/** How long unsubscribe waits for `events.unsubscribe` before closing anyway (M-SUB-4). */
export const UNSUBSCRIBE_WAIT_MS = 1000;

/**
 * Writes one encoded `notifications/resources/updated` frame (M-SUB-3): returns nothing when it
 * was written at once, else a promise settling once it is written.
 */
export type UpdateSink = (frame: Uint8Array) => Promise<void> | undefined;

/** The kernel channel a subscribable URI maps to, or null (M-SUB-1). */
export function subscriptionChannel(uri: string): string | null {
  let segments: string[];
  try {
    segments = parseResourceUri(uri).segments;
  } catch {
    return null;
  }
  const [head, id, ...rest] = segments;
  if (head === "events" && id !== undefined && rest.length === 0) return id;
  if (head !== "task" && head !== "pty") return null;
  const tail = rest.join("/");
  if (!(tail === "" || (head === "task" && tail === "out"))) return null;
  const text = id?.startsWith(`${head}:`) ? id.slice(head.length + 1) : id;
  // Canonical only: `task:007` named channel task.007, which no task's events ever reach.
  const n = text === undefined ? null : canonicalNumber(text);
  return n === null ? null : `${head}.${n}`;
}

/** Most UTF-8 bytes of a client's URI quoted in a log line. */
const LOGGED_URI_BYTES = 1024;

/**
 * A client's URI as the facade's stderr shows it (M-SUB-5: one line): cut, with every line
 * break, control and invisible character written as a `\uXXXX` escape, so no URI adds lines of
 * its own (a forged `shoal-mcp: …` line) or a megabyte to the log.
 */
function loggedUri(uri: string): string {
  return terminalJson(cutUtf8(uri, LOGGED_URI_BYTES));
}

interface Entry {
  channel: string;
  conn: RpcConnection | null;
  /** Settles when the subscription is established or has failed. */
  ready: Promise<void>;
}

function subscriptionFailed(reason: string): RpcError {
  return new RpcError(ErrorCode.INTERNAL_ERROR, `subscription failed: ${reason}`);
}

/**
 * Resource subscriptions keyed by exact URI, each on its own attached kernel connection
 * (M-SUB-1..5). Unsubscribing closes that connection, so nothing more is delivered for it.
 */
export class SubscriptionRegistry {
  #entries = new Map<string, Entry>();
  /** Dedicated connections opening or open, those of unsubscribed entries still closing among them. */
  #connections = 0;
  /** Subscriptions waiting for one of those to close. */
  #waiting: (() => void)[] = [];

  constructor(
    readonly kernel: KernelClient,
    readonly sink: UpdateSink,
    readonly log: (line: string) => void,
  ) {}

  /** Number of registered (or establishing) subscriptions. */
  get size(): number {
    return this.#entries.size;
  }

  /** `resources/subscribe`: idempotent per URI, at most {@link MAX_SUBSCRIPTIONS} (M-SUB-2). */
  async subscribe(uri: string): Promise<Record<string, never>> {
    const channel = subscriptionChannel(uri);
    if (channel === null) throw invalidParams(`resource is not subscribable: ${uri}`);
    const existing = this.#entries.get(uri);
    if (existing !== undefined) {
      await existing.ready;
      return {};
    }
    if (this.#entries.size >= MAX_SUBSCRIPTIONS) {
      throw quotaExceeded("subscriptions", MAX_SUBSCRIPTIONS);
    }
    const entry: Entry = { channel, conn: null, ready: Promise.resolve() };
    entry.ready = this.#establish(uri, entry);
    this.#entries.set(uri, entry);
    await entry.ready;
    return {};
  }

  /** `resources/unsubscribe`: removes the entry and closes its connection; unknown URIs → `{}` (M-SUB-4). */
  async unsubscribe(uri: string): Promise<Record<string, never>> {
    const entry = this.#entries.get(uri);
    if (entry === undefined) return {};
    this.#entries.delete(uri);
    // One wait, subscription still being made included: a kernel that does not answer (stopped)
    // held this answer for as long. A connection still attaching closes itself once it sees
    // the entry gone (#establish).
    let stopTimer = () => {};
    const waited = new Promise<void>((resolve) => stopTimer = after(UNSUBSCRIBE_WAIT_MS, resolve));
    await Promise.race([entry.ready.catch(() => {}), waited]);
    const conn = entry.conn;
    if (conn !== null) {
      await Promise.race([
        conn.request("events.unsubscribe", { channel: entry.channel }).catch(() => {}),
        waited,
      ]);
      conn.close();
    }
    stopTimer();
    return {};
  }

  /** Closes every subscription connection (facade shutdown, M-CLI-3). */
  closeAll(): void {
    const entries = [...this.#entries.values()];
    this.#entries.clear();
    for (const entry of entries) entry.conn?.close();
  }

  async #establish(uri: string, entry: Entry): Promise<void> {
    await this.#takeConnection();
    if (this.#entries.get(uri) !== entry) {
      this.#releaseConnection(); // unsubscribed while waiting
      return;
    }
    let conn: RpcConnection;
    try {
      conn = await this.kernel.openAttached();
    } catch (e) {
      this.#releaseConnection();
      this.#drop(uri, entry);
      throw subscriptionFailed(errorText(e));
    }
    conn.closed.then(() => this.#releaseConnection());
    if (this.#entries.get(uri) !== entry) {
      conn.close(); // unsubscribed while connecting
      return;
    }
    entry.conn = conn;
    // Waiting for stdout before reading the next event lets a client that stops reading back
    // up to the kernel, whose bounded queue then drops and counts (K-EVT-9/10) instead of the
    // facade buffering without limit.
    const frames = updateFrames(uri);
    // Events written canonically are forwarded without being parsed (onEventValues); any other
    // event frame is decoded and re-encoded, with the same bytes as the result.
    // Each event forwarded counts as activity (idle_work.ts): the heap compaction of an idle
    // facade then waits for a stream of events to pause rather than stalling it for 20-100 ms
    // and leaving the events after it slower.
    conn.onEventValues = ({ seq, payload }) => {
      if (this.#entries.get(uri) !== entry) return;
      noteActivity();
      return this.sink(frames.bytes(seq, payload));
    };
    conn.onNotification = (method, params) => {
      if (method !== "event" || this.#entries.get(uri) !== entry) return;
      noteActivity();
      return this.sink(frames.values(params.seq, params.payload));
    };
    try {
      await conn.request("events.subscribe", { channel: entry.channel });
    } catch (e) {
      conn.close();
      this.#drop(uri, entry);
      throw subscriptionFailed(errorText(e));
    }
    conn.closed.then(() => {
      if (this.#entries.get(uri) !== entry) return;
      this.#entries.delete(uri);
      this.log(`shoal-mcp: subscription to ${loggedUri(uri)} ended: its kernel connection closed`);
    });
  }

  /**
   * Takes one of {@link MAX_SUBSCRIPTIONS} dedicated connections, waiting while that many are open:
   * an unsubscribed entry's connection counts until it has closed, so subscribe/unsubscribe pairs
   * sent faster than connections attach and close cannot open them (each a relay process under
   * the release's flags, M-PERM-3) without bound.
   */
  async #takeConnection(): Promise<void> {
    while (this.#connections >= MAX_SUBSCRIPTIONS) {
      await new Promise<void>((resolve) => this.#waiting.push(resolve));
    }
    this.#connections++;
  }

  #releaseConnection(): void {
    this.#connections--;
    this.#waiting.shift()?.();
  }

  #drop(uri: string, entry: Entry): void {
    if (this.#entries.get(uri) === entry) this.#entries.delete(uri);
  }
}
