/**
 * The one command-line parser of both programs: strict, `--x v` and `--x=v`, with the rules and
 * first message lines of `node:util`'s parseArgs. Written out here because importing `node:util`
 * loads Deno's Node compatibility layer, 3-5 MiB resident in the facade for good (issue 33).
 */

/** Thrown for bad usage; every CLI prints `<program>: <message>` and its usage line, and exits 2. */
export class UsageError extends Error {}

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
 * Options are `--name`, `--name=value`, `--name value` and `-s` (a one-letter `short`); `--` ends
 * them and a lone `-` is an operand; a repeated option's last value wins, except a `multiple` one,
 * which collects them. Unknown options, missing or dash-led values (`--ttl -5`; write `--ttl=-5`),
 * a value for a switch and unexpected operands throw {@link UsageError}.
 */
export function parseCommandArgs(
  args: readonly string[],
  options: Record<string, OptionSpec>,
  operands: boolean,
): ParsedArgs {
  const values: ParsedArgs["values"] = {};
  const positionals: string[] = [];
  const operand = (arg: string) => {
    if (!operands) {
      throw new UsageError(
        `Unexpected argument '${arg}'. This command does not take positional arguments`,
      );
    }
    positionals.push(arg);
  };
  const shortName = (letter: string) =>
    Object.keys(options).find((n) => options[n].short === letter) ?? letter;
  const rest = [...args];
  while (rest.length > 0) {
    const arg = rest.shift()!;
    if (arg === "--") {
      rest.splice(0).forEach(operand);
      break;
    }
    if (!arg.startsWith("-") || arg === "-") {
      operand(arg);
      continue;
    }
    let name: string;
    let raw: string;
    let inline: string | undefined;
    if (arg.startsWith("--")) {
      const eq = arg.indexOf("=");
      raw = eq <= 2 ? arg : arg.slice(0, eq);
      name = raw.slice(2);
      inline = eq <= 2 ? undefined : arg.slice(eq + 1);
    } else {
      raw = arg.slice(0, 2);
      name = shortName(arg[1]);
      if (arg.length > 2) {
        // `-sV` is a string option's value; `-ab` is two options, as with parseArgs.
        if (options[name]?.type === "string") inline = arg.slice(2);
        else rest.unshift(`-${arg.slice(2)}`);
      }
    }
    const spec = Object.hasOwn(options, name) ? options[name] : undefined;
    if (spec === undefined) {
      const hint = operands
        ? `. To specify a positional argument starting with a '-', place it at the end of the ` +
          `command after '--', as in '-- "${raw}"`
        : "";
      throw new UsageError(`Unknown option '${raw}'${hint}`);
    }
    const both = spec.short === undefined ? `--${name}` : `-${spec.short}, --${name}`;
    let value: string | boolean;
    if (spec.type === "boolean") {
      if (inline !== undefined) throw new UsageError(`Option '${both}' does not take an argument`);
      value = true;
    } else if (inline !== undefined) {
      value = inline;
    } else {
      const next = rest.shift();
      if (next === undefined) throw new UsageError(`Option '${both} <value>' argument missing`);
      if (next.length > 1 && next.startsWith("-")) {
        throw new UsageError(`Option '${raw}' argument is ambiguous.`);
      }
      value = next;
    }
    if (spec.multiple) {
      const list = values[name];
      values[name] = [...(Array.isArray(list) ? list : []), value as string];
    } else {
      values[name] = value;
    }
  }
  return { values, positionals };
}

/** A string option's value, or undefined when absent. */
export function stringOption(parsed: ParsedArgs, name: string): string | undefined {
  const value = parsed.values[name];
  return typeof value === "string" ? value : undefined;
}
