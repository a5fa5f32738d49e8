/** The work budget of one effect derivation (EFFECT_ANALYSIS_STEPS). */
import { EFFECT_ANALYSIS_STEPS } from "../../protocol/limits.ts";

/** Raised when the work budget is spent. */
export class BudgetExceeded extends Error {}

/** Counts analysis steps and throws {@link BudgetExceeded} past the limit. */
export class StepBudget {
  #steps = 0;

  /** Spends one step. */
  tick(): void {
    if (++this.#steps > EFFECT_ANALYSIS_STEPS) throw new BudgetExceeded();
  }
}
