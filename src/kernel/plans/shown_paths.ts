/**
 * The paths of a refusal as its caller may see them: a path the analysis reached through a
 * symlink and that the caller may not read is shown as the caller wrote it, so a refusal does not
 * tell an agent where a link leads outside its grants (which `readlink` inside its sandbox could
 * not tell it either, past the first hop).
 */
import type { Effect } from "../policy/effects.ts";
import type { Grants } from "../policy/grants.ts";

/** Physical path → the form written, for each path of `written` that `grants` may not read. */
export function hiddenTargets(
  written: readonly [string, string][],
  grants: Grants,
): Map<string, string> {
  return new Map(written.filter(([physical]) => !grants.mayRead(physical)));
}

/** `effects` with each path of `hidden` shown as written (for the wire; never evaluated). */
export function shownEffects(effects: readonly Effect[], hidden: Map<string, string>): Effect[] {
  if (hidden.size === 0) return [...effects];
  return effects.map((effect) =>
    "paths" in effect
      ? { ...effect, paths: effect.paths.map((path) => hidden.get(path) ?? path) }
      : effect
  );
}

/** The effects of an analysis as `grants`' principal may see them ({@link shownEffects}). */
export function callerEffects(
  analysis: { effects: readonly Effect[]; written: readonly [string, string][] },
  grants: Grants,
): Effect[] {
  return shownEffects(analysis.effects, hiddenTargets(analysis.written, grants));
}

/** A missing-grant line (`fs.read "/path"`) with its path shown as written when hidden. */
export function shownLine(line: string, hidden: Map<string, string>): string {
  for (const [physical, written] of hidden) {
    const quoted = JSON.stringify(physical);
    if (line.endsWith(` ${quoted}`)) {
      return `${line.slice(0, -quoted.length)}${JSON.stringify(written)}`;
    }
  }
  return line;
}
