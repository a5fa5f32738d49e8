import type { EventBus } from "../events/bus.ts";
import type { PlanStore } from "./store.ts";

/** The kernel services that store and announce plans; `daemon/kernel.ts`'s `Kernel` has them. */
export interface PlanServices {
  readonly plans: PlanStore;
  readonly bus: EventBus;
  /** The socket served, which the approval command that -32011 names connects to. */
  readonly config: { readonly socketPath: string };
}
