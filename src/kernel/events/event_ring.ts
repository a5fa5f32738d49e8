import { EVENT_RING } from "../../protocol/limits.ts";
import type { BusEvent } from "./bus_event.ts";

/** The newest 1024 events of one channel, plus the next seq a ring-only channel assigns (K-EVT-7). */
export class EventRing {
  #slots: (BusEvent | undefined)[] = new Array(EVENT_RING);
  #start = 0;
  #size = 0;
  /** Next seq for channels whose seq the bus assigns (not used by durable channels). */
  nextSeq = 0;

  /** Appends an event, evicting the oldest when 1024 are held. */
  push(event: BusEvent): void {
    const end = (this.#start + this.#size) % EVENT_RING;
    this.#slots[end] = event;
    if (this.#size < EVENT_RING) this.#size++;
    else this.#start = (this.#start + 1) % EVENT_RING;
  }

  /** Seq of the oldest held event, or undefined when empty. */
  get oldestSeq(): number | undefined {
    return this.#size === 0 ? undefined : this.#slots[this.#start]!.seq;
  }

  /** Held events from newest to oldest. */
  *newestFirst(): Generator<BusEvent> {
    for (let i = this.#size - 1; i >= 0; i--) {
      yield this.#slots[(this.#start + i) % EVENT_RING]!;
    }
  }
}
