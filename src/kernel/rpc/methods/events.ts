import {
  eventsPublishParams,
  eventsReadParams,
  eventsSubscribeParams,
  eventsUnsubscribeParams,
} from "../../events/params.ts";
import { attached, type MethodSpec } from "../method.ts";

/** `events.*` (K-EVT-1..4): reads filtered by the caller's visibility, pushes on this connection. */
export const EVENT_METHODS: MethodSpec[] = [
  attached("events.read", eventsReadParams, ({ kernel, conn }, p) => ({
    channel: p.channel,
    events: kernel.bus.read(p.channel, p.since, p.limit, conn.visible, conn.storedOnly(p.channel)),
  })),
  attached("events.publish", eventsPublishParams, ({ kernel }, p) => {
    const { channel, seq, ts } = kernel.bus.publishFromClient(p.channel, p.payload);
    return { channel, seq, ts };
  }),
  attached("events.subscribe", eventsSubscribeParams, ({ kernel, conn }, p) => {
    kernel.bus.subscribe(conn.subscriber, p.channel, p.since);
    return { channel: p.channel, subscribed: true };
  }),
  attached("events.unsubscribe", eventsUnsubscribeParams, ({ kernel, conn }, p) => {
    kernel.bus.unsubscribe(conn.subscriber, p.channel);
    return { channel: p.channel, subscribed: false };
  }),
];
