/**
 * Effects of bash source (K-EFF-1..5): the derivation entry point over the shoal AST, with the
 * effect vocabulary and bin hashing re-exported for the kernel.
 */
import type { File } from "../bash/ast_nodes.ts";
import type { EffectAnalysis, EffectState } from "./effect_types.ts";
import { reversibilityOf } from "./effect_types.ts";
import { Analyzer } from "./_analyzer.ts";
import { EffectSet } from "./_effect_set.ts";

export * from "./effect_types.ts";
export { fillBinHashes } from "./bin_hash.ts";
export { TooManyLookups } from "./_step_budget.ts";

/**
 * Derives the canonical effects of bash source `src`, parsed into `file`, from session state
 * (K-EFF-3..5). Past `lookups` distinct command names looked up along PATH it throws
 * {@link TooManyLookups}.
 */
export function deriveEffects(
  file: File,
  src: string,
  state: EffectState,
  lookups = Infinity,
): EffectAnalysis {
  const set = new EffectSet();
  new Analyzer(file, state, set, lookups).run(src);
  const effects = set.toList();
  return { effects, reversibility: reversibilityOf(effects), written: set.written };
}
