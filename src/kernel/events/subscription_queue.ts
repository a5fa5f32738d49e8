import { SUBSCRIBER_QUEUE } from "../../protocol/limits.ts";
import type { BusEvent } from "./bus_event.ts";
import { nowNs } from "./now_ns.ts";

/**
 * The outgoing queue of one subscription (K-EVT-9, K-EVT-10): at most 256 live events, drained
 * by its own async loop through `deliver`. A full queue drops and counts; one synthetic
 * `{dropped, latest_seq}` event follows before the next delivered event.
 */
export class SubscriptionQueue {
  #events: BusEvent[] = [];
  /** How many of the queued events, at its front, are replayed history rather than live. */
  #replayed = 0;
  #dropped = 0;
  #lastDroppedSeq = -1;
  #draining = false;
  #closed = false;

  constructor(
    readonly channel: string,
    private readonly deliver: (event: BusEvent) => Promise<void>,
    private readonly onDeliveryFailure: () => void,
  ) {}

  /**
   * Queues replayed history ahead of any live event (the bus calls it as it subscribes); it does
   * not count against the live bound (K-EVT-3): a live event queues behind 1024 replayed ones.
   */
  replay(events: readonly BusEvent[]): void {
    if (this.#closed || events.length === 0) return;
    this.#events.push(...events);
    this.#replayed += events.length;
    this.#kick();
  }

  /** Queues a live event, or drops and counts it when the queue is full. Never blocks. */
  offer(event: BusEvent): void {
    if (this.#closed) return;
    if (this.#events.length - this.#replayed >= SUBSCRIBER_QUEUE) {
      this.#dropped++;
      this.#lastDroppedSeq = event.seq;
      return;
    }
    this.#flushDropped();
    this.#events.push(event);
    this.#kick();
  }

  /** Stops delivery and discards what is still queued. */
  close(): void {
    this.#closed = true;
    this.#events = [];
    this.#replayed = 0;
  }

  #flushDropped(): void {
    if (this.#dropped === 0) return;
    this.#events.push({
      channel: this.channel,
      seq: this.#lastDroppedSeq,
      ts: nowNs(),
      payload: { dropped: this.#dropped, latest_seq: this.#lastDroppedSeq },
    });
    this.#dropped = 0;
  }

  #kick(): void {
    if (this.#draining) return;
    this.#draining = true;
    // Drain from a microtask so a subscriber's deliver never runs inside publish.
    queueMicrotask(() => this.#drain());
  }

  async #drain(): Promise<void> {
    try {
      while (!this.#closed) {
        if (this.#events.length === 0) this.#flushDropped();
        const event = this.#events.shift();
        if (event === undefined) break;
        if (this.#replayed > 0) this.#replayed--;
        await this.deliver(event);
      }
    } catch {
      this.close();
      this.onDeliveryFailure();
    } finally {
      this.#draining = false;
    }
  }
}
