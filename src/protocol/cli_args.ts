/** The one command-line parser of both programs: `node:util` parseArgs, strict, `--x v` and `--x=v`. */
import { parseArgs } from "node:util";
import { UsageError } from "./usage_error.ts";

export { UsageError };

/** How one option is written: a string value (repeatable when `multiple`) or a boolean switch. */
export interface OptionSpec {
  type: "string" | "boolean";
  multiple?: boolean;
  short?: string;
}

/** Option values by name, and the operands in order. */
export interface ParsedArgs {
  values: Record<string, string | boolean | string[] | undefined>;
  positionals: string[];
}

/**
 * Parses `args` strictly against `options`; operands are allowed only when `operands` is true.
 * Unknown options, missing or dash-led values (`--ttl -5`; write `--ttl=-5`) and unexpected
 * operands throw {@link UsageError} with parseArgs' first message line.
 */
export function parseCommandArgs(
  args: readonly string[],
  options: Record<string, OptionSpec>,
  operands: boolean,
): ParsedArgs {
  try {
    const parsed = parseArgs({
      args: [...args],
      options,
      strict: true,
      allowPositionals: operands,
    });
    return { values: parsed.values as ParsedArgs["values"], positionals: parsed.positionals };
  } catch (e) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === "string" && code.startsWith("ERR_PARSE_ARGS_")) {
      throw new UsageError((e as Error).message.split("\n")[0]);
    }
    throw e;
  }
}

/** A string option's value, or undefined when absent. */
export function stringOption(parsed: ParsedArgs, name: string): string | undefined {
  const value = parsed.values[name];
  return typeof value === "string" ? value : undefined;
}

/**
 * A path option's value, or undefined when absent. An empty one names no file and is a usage
 * error: read as absent, `--socket ''` served (or reached) the default socket instead.
 */
export function pathOption(parsed: ParsedArgs, name: string): string | undefined {
  const value = stringOption(parsed, name);
  if (value === "") throw new UsageError(`--${name} must not be empty`);
  return value;
}
