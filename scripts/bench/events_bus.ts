// Benchmark: publish → delivery latency of the event bus for 10 subscribers × 1000 events.
// Each event's `ts` is stamped at publish; a subscriber's `deliver` measures now − ts.
// Run: deno run -A scripts/bench/events_bus.ts
import type { BusEvent } from "../../src/kernel/events/bus_event.ts";
import { EventBus } from "../../src/kernel/events/bus.ts";
import { nowNs } from "../../src/kernel/events/now_ns.ts";
import { Journal } from "../../src/kernel/journal/journal.ts";

const SUBSCRIBERS = 10;
const EVENTS = 1000;
const CHANNEL = "user.bench";

const dir = await Deno.makeTempDir();
const journal = Journal.open(dir);
try {
  const bus = new EventBus(journal);
  const latenciesNs: bigint[] = [];
  let dropped = 0;
  for (let s = 0; s < SUBSCRIBERS; s++) {
    bus.subscribe({
      visible: () => true,
      deliver(event: BusEvent): Promise<void> {
        const payload = event.payload as { dropped?: number };
        if (payload.dropped !== undefined) dropped += payload.dropped;
        else latenciesNs.push(nowNs() - event.ts);
        return Promise.resolve();
      },
    }, CHANNEL);
  }
  for (let i = 0; i < EVENTS; i++) {
    bus.publish(CHANNEL, { i });
    // Yield a macrotask so delivery runs between publishes, as it does in a serving kernel.
    await new Promise((resolve) => setTimeout(resolve, 0));
  }
  for (let i = 0; i < 1000 && latenciesNs.length + dropped < SUBSCRIBERS * EVENTS; i++) {
    await new Promise((resolve) => setTimeout(resolve, 1));
  }
  const sorted = latenciesNs.map(Number).sort((a, b) => a - b);
  const pct = (p: number) =>
    (sorted[Math.max(0, Math.ceil(p * sorted.length) - 1)] / 1000).toFixed(1);
  console.log(
    `events_bus: ${SUBSCRIBERS} subscribers x ${EVENTS} events: delivered ${sorted.length}, ` +
      `dropped ${dropped}, publish->deliver p50 ${pct(0.5)} us, p95 ${pct(0.95)} us, ` +
      `max ${pct(1)} us`,
  );
} finally {
  journal.close();
  await Deno.remove(dir, { recursive: true });
}
