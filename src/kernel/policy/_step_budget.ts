/** The work budget of one effect derivation (EFFECT_ANALYSIS_STEPS). */
import { EFFECT_ANALYSIS_STEPS } from "../../protocol/limits.ts";

/** Raised when the work budget is spent. */
export class BudgetExceeded extends Error {}

/**
 * Raised when a derivation run on the event loop looks up more programs than it was allowed: the
 * source is then analysed off the loop, by a derivation without that limit (E-4).
 */
export class TooManyLookups extends Error {}

/** Counts analysis steps and throws {@link BudgetExceeded} past the limit. */
export class StepBudget {
  #steps = 0;

  /** Spends one step. */
  tick(): void {
    if (++this.#steps > EFFECT_ANALYSIS_STEPS) throw new BudgetExceeded();
  }
}
