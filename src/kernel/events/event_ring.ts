import { EVENT_RING } from "../../protocol/limits.ts";
import type { BusEvent } from "./bus_event.ts";

/** The newest 1024 events of one channel, plus the next seq a ring-only channel assigns (K-EVT-7). */
export class EventRing {
  /** Grows to 1024 slots as events come (most channels, e.g. a task's, hold only a few). */
  #slots: BusEvent[] = [];
  /** Where the oldest event is once the ring is full. */
  #start = 0;
  /** Next seq for channels whose seq the bus assigns (not used by durable channels). */
  nextSeq = 0;

  /** Appends an event, evicting the oldest when 1024 are held. */
  push(event: BusEvent): void {
    if (this.#slots.length < EVENT_RING) {
      this.#slots.push(event);
      return;
    }
    this.#slots[this.#start] = event;
    this.#start = (this.#start + 1) % EVENT_RING;
  }

  /** Seq of the oldest held event, or undefined when empty. */
  get oldestSeq(): number | undefined {
    return this.#slots[this.#start]?.seq;
  }

  /** Held events from newest to oldest. */
  *newestFirst(): Generator<BusEvent> {
    const size = this.#slots.length;
    for (let i = size - 1; i >= 0; i--) {
      yield this.#slots[(this.#start + i) % size];
    }
  }
}
