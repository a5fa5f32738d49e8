import type { BusEvent } from "./bus_event.ts";

/** Channels whose events are stored in SQLite and keep their seq across restarts (K-EVT-7). */
export const DURABLE_CHANNELS: ReadonlySet<string> = new Set([
  "journal",
  "session.transcript",
]);

/**
 * The payload member a read of each durable channel can be narrowed by in storage (K-EVT-8): a
 * `journal` event's `principal`, a `session.transcript` event's `session`.
 */
export const NARROWING_MEMBER: ReadonlyMap<string, "principal" | "session"> = new Map([
  ["journal", "principal"],
  ["session.transcript", "session"],
]);

/** Durable storage for the events of {@link DURABLE_CHANNELS}; it assigns their seq and ts. */
export interface DurableLog {
  /** Stores a new event with the next seq of its channel and returns it. */
  appendEvent(channel: string, payload: unknown): BusEvent;
  /**
   * The newest `limit` stored events with `since < seq < before`, in ascending seq order
   * (`before` absent = no upper bound); with `only`, just those whose payload's
   * {@link NARROWING_MEMBER} of the channel is `only`, found without reading the others.
   */
  readEvents(
    channel: string,
    since: number,
    limit: number,
    before?: number,
    only?: string,
  ): BusEvent[];
  /** The highest stored seq of `channel`, or -1 when it has none. */
  lastSeq(channel: string): number;
}
