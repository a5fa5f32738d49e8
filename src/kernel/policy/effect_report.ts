/** Effects as they leave the kernel (K-EFF-7): every string, list and effect list bounded. */
import { EFFECT_REPORT_ITEMS, EFFECT_STRING_BYTES } from "../../protocol/limits.ts";
import { cutUtf8 } from "../../protocol/utf8.ts";

/** An effect in its reported form: `kind` plus bounded members, `<list>_more` where a list was cut. */
export interface ReportedEffect {
  kind: string;
  [member: string]: unknown;
}

/** A reported effect list: at most {@link EFFECT_REPORT_ITEMS} effects, the rest counted. */
export interface EffectReport {
  effects: ReportedEffect[];
  /** How many effects beyond the first {@link EFFECT_REPORT_ITEMS} were left out; absent when none. */
  effects_more?: number;
}

function boundedMember(value: unknown): unknown {
  return typeof value === "string" ? cutUtf8(value, EFFECT_STRING_BYTES) : value;
}

/** One effect with each string cut and each list (`paths`, `names`) kept to its first entries. */
function reportEffect(effect: { readonly kind: string }): ReportedEffect {
  const out: ReportedEffect = { kind: effect.kind };
  for (const [member, value] of Object.entries(effect as Record<string, unknown>)) {
    if (member === "kind") continue;
    if (!Array.isArray(value)) {
      out[member] = boundedMember(value);
      continue;
    }
    out[member] = value.slice(0, EFFECT_REPORT_ITEMS).map(boundedMember);
    if (value.length > EFFECT_REPORT_ITEMS) {
      out[`${member}_more`] = value.length - EFFECT_REPORT_ITEMS;
    }
  }
  return out;
}

/**
 * The bounded report of `effects` for the wire (`explain`, plans, error data, journal rows,
 * approvals): policy evaluation and the stored journal row keep the uncut effects.
 */
export function reportEffects(effects: readonly { readonly kind: string }[]): EffectReport {
  const report: EffectReport = { effects: effects.slice(0, EFFECT_REPORT_ITEMS).map(reportEffect) };
  if (effects.length > EFFECT_REPORT_ITEMS) {
    report.effects_more = effects.length - EFFECT_REPORT_ITEMS;
  }
  return report;
}

/**
 * A list of effect-derived strings (such as the grants a denial lacks) as the wire member `name`,
 * bounded as effect members are: the first {@link EFFECT_REPORT_ITEMS}, each cut, and
 * `<name>_more` counting those left out.
 */
export function reportedMember(name: string, values: readonly string[]): Record<string, unknown> {
  const items = values.slice(0, EFFECT_REPORT_ITEMS).map((s) => cutUtf8(s, EFFECT_STRING_BYTES));
  const more = values.length - items.length;
  return more > 0 ? { [name]: items, [`${name}_more`]: more } : { [name]: items };
}
