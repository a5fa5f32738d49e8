import { invalidParams, quotaExceeded } from "../../protocol/errors.ts";
import {
  EVENT_PAYLOAD_LIMIT,
  EVENTS_READ_DEFAULT_LIMIT,
  MAX_SUBSCRIPTIONS,
  MAX_USER_CHANNELS,
} from "../../protocol/limits.ts";
import { compactJson } from "../../protocol/rpc.ts";
import type { Audience, BusEvent } from "./bus_event.ts";
import { assertChannelName } from "./channel_name.ts";
import { DURABLE_CHANNELS, type DurableLog } from "./durable_log.ts";
import { EventRing } from "./event_ring.ts";
import { nowNs } from "./now_ns.ts";
import { SubscriptionQueue } from "./subscription_queue.ts";

/**
 * Who receives pushes: typically one kernel connection. `deliver` writes one event (the
 * connection's writer); `visible` filters reads and pushes for this subscriber (K-EVT-8), and
 * `storedOnly` names the owner its reads of a durable channel can be narrowed to in storage
 * ({@link DurableLog.readEvents}), when `visible` admits no other owner's events there.
 */
export interface EventSubscriber {
  deliver(event: BusEvent): Promise<void>;
  visible(event: BusEvent): boolean;
  storedOnly?(channel: string): string | undefined;
}

/** Predicate that lets every event through. */
export function everyEvent(_event: BusEvent): boolean {
  return true;
}

const USER_PREFIX = "user.";

const encoder = new TextEncoder();

/** Bytes of `value` as compact JSON; Infinity when it nests too deeply to serialize (M-IN-1). */
function compactSize(value: unknown): number {
  try {
    return encoder.encode(compactJson(value)).length;
  } catch (e) {
    if (e instanceof RangeError) return Infinity;
    throw e;
  }
}

/**
 * The kernel's event bus (§9): a 1024-event ring per channel, durable storage for `journal` and
 * `session.transcript` through a {@link DurableLog}, and bounded per-subscription queues so that
 * publishing never waits for a subscriber.
 */
export class EventBus {
  #rings = new Map<string, EventRing>();
  #userChannels = 0;
  #subscriptions = new Map<EventSubscriber, Map<string, SubscriptionQueue>>();
  #byChannel = new Map<
    string,
    Map<SubscriptionQueue, EventSubscriber>
  >();
  #audiences = new WeakMap<BusEvent, Audience>();

  constructor(private readonly log: DurableLog) {}

  /**
   * Publishes on any channel (kernel-internal), for `audience` only when given (K-EVT-8).
   * Durable channels get their seq from the log.
   */
  publish(channel: string, payload: unknown, audience?: Audience): BusEvent {
    assertChannelName(channel);
    const ring = this.#ring(channel);
    const event = DURABLE_CHANNELS.has(channel)
      ? this.log.appendEvent(channel, payload)
      : { channel, seq: ring.nextSeq++, ts: nowNs(), payload };
    if (audience) this.#audiences.set(event, audience);
    this.#admit(ring, event);
    return event;
  }

  /** Whom `event` was published for, or undefined when for every subscriber of its channel. */
  audienceOf(event: BusEvent): Audience | undefined {
    return this.#audiences.get(event);
  }

  /**
   * Announces an event the durable log already stored (the `journal` event written by
   * `Journal.finish` in the row's transaction, J-6): it enters the ring and reaches subscribers.
   */
  publishStored(event: BusEvent): void {
    this.#admit(this.#ring(event.channel), event);
  }

  /**
   * `events.publish` (K-EVT-2): only `user.*` channels (`-32602` with `data.channel`), payload
   * at most 64 KiB as compact JSON (`-32602`), at most 1024 user channels (`-32040`).
   */
  publishFromClient(channel: string, payload: unknown): BusEvent {
    assertChannelName(channel);
    if (!channel.startsWith(USER_PREFIX)) {
      throw invalidParams("only user.* channels can be published", {
        channel,
      });
    }
    if (payload === undefined || compactSize(payload) > EVENT_PAYLOAD_LIMIT) {
      throw invalidParams(
        `payload must be JSON of at most ${EVENT_PAYLOAD_LIMIT} bytes compact`,
        { limit: EVENT_PAYLOAD_LIMIT },
      );
    }
    return this.publish(channel, payload);
  }

  /**
   * `events.read` (K-EVT-1): events with `seq > since` that `visible` admits, the newest
   * `limit` of them in ascending seq order. Durable channels continue below the ring from the
   * log, narrowed there to the events of owner `only` when given (all `visible` may admit).
   */
  read(
    channel: string,
    since = -1,
    limit = EVENTS_READ_DEFAULT_LIMIT,
    visible: (event: BusEvent) => boolean = everyEvent,
    only?: string,
  ): BusEvent[] {
    assertChannelName(channel);
    const newestFirst: BusEvent[] = [];
    const durable = DURABLE_CHANNELS.has(channel);
    const held = this.#rings.get(channel);
    const ring = held && (!durable || this.#whole(held, channel)) ? held : undefined;
    if (ring) {
      for (const event of ring.newestFirst()) {
        if (event.seq <= since || newestFirst.length >= limit) break;
        if (visible(event)) newestFirst.push(event);
      }
    }
    if (durable) {
      let before = ring?.oldestSeq;
      while (newestFirst.length < limit && (before ?? Infinity) > since + 1) {
        const want = limit - newestFirst.length;
        const page = this.log.readEvents(channel, since, want, before, only);
        for (let i = page.length - 1; i >= 0; i--) {
          if (visible(page[i]) && newestFirst.length < limit) {
            newestFirst.push(page[i]);
          }
        }
        if (page.length < want) break;
        before = page[0].seq;
      }
    }
    return newestFirst.reverse();
  }

  /**
   * Whether a durable channel's ring holds every stored event from its oldest one up: kernels of
   * other sockets on the same state directory store events of the channel too (J-6), which only
   * the log has. A ring with gaps is not read, the log answers the whole read.
   */
  #whole(ring: EventRing, channel: string): boolean {
    let expected = this.log.lastSeq(channel);
    for (const event of ring.newestFirst()) {
      if (event.seq !== expected) return false;
      expected--;
    }
    return true;
  }

  /**
   * `events.subscribe` (K-EVT-3): live events from now on; with `since`, first what
   * `read(channel, since)` returns for this subscriber. Subscribing again to a channel changes
   * nothing. More than 64 subscriptions per subscriber → `-32040`.
   */
  subscribe(subscriber: EventSubscriber, channel: string, since?: number): void {
    assertChannelName(channel);
    let queues = this.#subscriptions.get(subscriber);
    if (queues?.has(channel)) return;
    if ((queues?.size ?? 0) >= MAX_SUBSCRIPTIONS) {
      throw quotaExceeded("subscriptions", MAX_SUBSCRIPTIONS);
    }
    if (!queues) {
      queues = new Map();
      this.#subscriptions.set(subscriber, queues);
    }
    const queue = new SubscriptionQueue(
      channel,
      (event) => subscriber.deliver(event),
      () => this.removeSubscriber(subscriber),
    );
    queues.set(channel, queue);
    let listeners = this.#byChannel.get(channel);
    if (!listeners) {
      listeners = new Map();
      this.#byChannel.set(channel, listeners);
    }
    listeners.set(queue, subscriber);
    if (since !== undefined) {
      queue.replay(
        this.read(
          channel,
          since,
          EVENTS_READ_DEFAULT_LIMIT,
          (event) => subscriber.visible(event),
          subscriber.storedOnly?.(channel),
        ),
      );
    }
  }

  /** `events.unsubscribe` (K-EVT-4): stops pushes of `channel` to `subscriber`; idempotent. */
  unsubscribe(subscriber: EventSubscriber, channel: string): void {
    assertChannelName(channel);
    const queues = this.#subscriptions.get(subscriber);
    const queue = queues?.get(channel);
    if (!queues || !queue) return;
    queue.close();
    queues.delete(channel);
    if (queues.size === 0) this.#subscriptions.delete(subscriber);
    const listeners = this.#byChannel.get(channel)!;
    listeners.delete(queue);
    if (listeners.size === 0) this.#byChannel.delete(channel);
  }

  /** Drops every subscription of `subscriber` (its connection closed, K-EVT-4). */
  removeSubscriber(subscriber: EventSubscriber): void {
    for (const channel of [...this.#subscriptions.get(subscriber)?.keys() ?? []]) {
      this.unsubscribe(subscriber, channel);
    }
  }

  /**
   * Lets go of a dynamic channel's held events once what it announced is gone (a task no longer
   * retained, K-TASK-2; a closed PTY, K-PTY-5), so its ring does not outlive it; live
   * subscriptions are unaffected.
   */
  retire(channel: string): void {
    this.#rings.delete(channel);
  }

  /** Channels `subscriber` is subscribed to. */
  subscriptions(subscriber: EventSubscriber): string[] {
    return [...this.#subscriptions.get(subscriber)?.keys() ?? []];
  }

  #ring(channel: string): EventRing {
    let ring = this.#rings.get(channel);
    if (ring) return ring;
    if (channel.startsWith(USER_PREFIX)) {
      if (this.#userChannels >= MAX_USER_CHANNELS) {
        throw quotaExceeded("user_channels", MAX_USER_CHANNELS);
      }
      this.#userChannels++;
    }
    ring = new EventRing();
    this.#rings.set(channel, ring);
    return ring;
  }

  #admit(ring: EventRing, event: BusEvent): void {
    ring.push(event);
    for (const [queue, subscriber] of this.#byChannel.get(event.channel) ?? []) {
      if (subscriber.visible(event)) queue.offer(event);
    }
  }
}
