import type { EventBus } from "../events/bus.ts";
import type { PlanStore } from "./store.ts";

/** The kernel services that store and announce plans; `daemon/kernel.ts`'s `Kernel` has them. */
export interface PlanServices {
  readonly plans: PlanStore;
  readonly bus: EventBus;
}
