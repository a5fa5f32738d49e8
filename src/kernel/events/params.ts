import { z } from "zod";
import { EVENTS_READ_DEFAULT_LIMIT, EVENTS_READ_MAX_LIMIT } from "../../protocol/limits.ts";
import { CHANNEL_NAME } from "./channel_name.ts";

const channel = z.string().regex(CHANNEL_NAME, "invalid channel name");
const cursor = z.number().int().min(-1);

/** Params of `events.read` (K-EVT-1); `since` defaults to -1, `limit` to 1024. */
export const eventsReadParams = z.object({
  channel,
  since: cursor.nullish().transform((v) => v ?? -1),
  limit: z.number().int().min(1).max(EVENTS_READ_MAX_LIMIT).nullish()
    .transform((v) => v ?? EVENTS_READ_DEFAULT_LIMIT),
});

/** Params of `events.publish` (K-EVT-2); the `user.*` and size rules are `EventBus.publishFromClient`'s. */
export const eventsPublishParams = z.object({
  channel,
  payload: z.unknown().refine((v) => v !== undefined, "payload is required"),
});

/** Params of `events.subscribe` (K-EVT-3); absent or null `since` means live events only. */
export const eventsSubscribeParams = z.object({
  channel,
  since: cursor.nullish().transform((v) => v ?? undefined),
});

/** Params of `events.unsubscribe` (K-EVT-4). */
export const eventsUnsubscribeParams = z.object({ channel });
