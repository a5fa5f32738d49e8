/** GNU getopt_long-style option parsing over analyzed words (K-EFF-3a). */
import { type ArgValue, type CommandIO, STATIC } from "./command_io.ts";

/** Which options take a value. */
export interface OptionSpec {
  /** Short option letters followed by a value (attached or the next word). */
  short?: string;
  /** Short option letters whose value may only be attached (`-i.bak`). */
  attached?: string;
  /** Long option names (without `--`) followed by a value. */
  long?: readonly string[];
  /** Long options without a value that a handler looks at, so their abbreviations resolve. */
  flags?: readonly string[];
}

/** Words split into operands and options. */
export interface Parsed {
  operands: ArgValue[];
  /** Options in order; `name` is `-x` or `--name`. */
  options: { name: string; value: ArgValue | null }[];
  /** Why the words cannot be followed: a dynamic word where an option could be, or an ambiguous abbreviation. */
  ambiguous: string | null;
}

/** A long option name as given, resolved like getopt_long: exact, else a unique prefix. */
function resolveLong(given: string, spec: OptionSpec): string | null | typeof AMBIGUOUS {
  const known = [...spec.long ?? [], ...spec.flags ?? []];
  if (known.includes(given)) return given;
  const matches = known.filter((name) => name.startsWith(given));
  if (matches.length > 1) return AMBIGUOUS;
  return matches[0] ?? null;
}

const AMBIGUOUS = Symbol("ambiguous");

/**
 * GNU-style option parsing; after `--` every word is an operand. Long options may be
 * abbreviated (`--targ=D` is `--target-directory=D`), so names resolve against the spec.
 */
function parseOptions(args: readonly ArgValue[], spec: OptionSpec): Parsed {
  const parsed: Parsed = { operands: [], options: [], ambiguous: null };
  const long = new Set(spec.long ?? []);
  for (let i = 0; i < args.length; i++) {
    const arg = args[i];
    if (arg.text === null) {
      if (!arg.single || arg.prefix === "" || arg.prefix.startsWith("-")) {
        parsed.ambiguous = "dynamic argument";
      }
      parsed.operands.push(arg);
      continue;
    }
    const text = arg.text;
    if (text === "--") {
      parsed.operands.push(...args.slice(i + 1));
      break;
    }
    if (text.startsWith("--")) {
      const eq = text.indexOf("=");
      const given = text.slice(2, eq < 0 ? undefined : eq);
      const resolved = resolveLong(given, spec);
      if (resolved === AMBIGUOUS) {
        parsed.ambiguous = `ambiguous option --${given}`;
        continue;
      }
      const name = `--${resolved ?? given}`;
      if (eq >= 0) {
        parsed.options.push({ name, value: STATIC(text.slice(eq + 1)) });
      } else if (resolved !== null && long.has(resolved)) {
        parsed.options.push({ name, value: args[i + 1] ?? null });
        i++;
      } else {
        parsed.options.push({ name, value: null });
      }
      continue;
    }
    if (text.startsWith("-") && text.length > 1) {
      for (let j = 1; j < text.length; j++) {
        const letter = text[j];
        const rest = text.slice(j + 1);
        if (spec.attached?.includes(letter)) {
          parsed.options.push({ name: `-${letter}`, value: rest === "" ? null : STATIC(rest) });
          break;
        }
        if (spec.short?.includes(letter)) {
          if (rest !== "") {
            parsed.options.push({ name: `-${letter}`, value: STATIC(rest) });
          } else {
            parsed.options.push({ name: `-${letter}`, value: args[i + 1] ?? null });
            i++;
          }
          break;
        }
        parsed.options.push({ name: `-${letter}`, value: null });
      }
      continue;
    }
    parsed.operands.push(arg);
  }
  return parsed;
}

/** Values of the options named in `names`. */
export function optionValues(parsed: Parsed, ...names: string[]): ArgValue[] {
  return parsed.options.filter((o) => names.includes(o.name) && o.value !== null)
    .map((o) => o.value!);
}

/** Whether any option named in `names` was given. */
export function hasOption(parsed: Parsed, ...names: string[]): boolean {
  return parsed.options.some((o) => names.includes(o.name));
}

/** Parses and reports `opaque` for words it cannot follow; null when it did. */
export function parse(args: readonly ArgValue[], spec: OptionSpec, io: CommandIO): Parsed | null {
  const parsed = parseOptions(args, spec);
  if (parsed.ambiguous !== null) {
    io.opaque(parsed.ambiguous);
    return null;
  }
  return parsed;
}
