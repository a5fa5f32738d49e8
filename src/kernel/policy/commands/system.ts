/** date, env, printenv, and commands with no effect of their own. */
import { type ArgValue, type CommandHandler, type CommandIO, eachPath } from "./command_io.ts";
import { hasOption, optionValues, parse } from "./_getopt.ts";

/**
 * date: reads the clock and `-f`/`-r` files. `-s`/`--set` or an operand other than a `+FORMAT`
 * (`date 010100002020`) sets the clock, which no effect kind says.
 */
export function date(args: ArgValue[], io: CommandIO): void {
  io.flag("time");
  const parsed = parse(args, {
    short: "dfrs",
    attached: "I",
    long: ["date", "file", "reference", "set"],
  }, io);
  if (parsed === null) return;
  const sets = parsed.operands.some((arg) => !(arg.text ?? arg.prefix).startsWith("+"));
  if (sets || hasOption(parsed, "-s", "--set")) {
    io.opaque("date sets the system clock");
    return;
  }
  eachPath(io, "fs_read", optionValues(parsed, "-f", "--file", "-r", "--reference"));
}

/** env without a command: prints the environment. */
export function env(args: ArgValue[], io: CommandIO): void {
  for (let i = 0; i < args.length; i++) {
    const text = args[i].text;
    if (text === null) {
      io.opaque("dynamic argument");
      return;
    }
    if (["-i", "--ignore-environment", "-0", "--null", "-"].includes(text)) continue;
    if (text === "-u" || text === "--unset") {
      i++;
      continue;
    }
    if (text.startsWith("--unset=") || /^-u./.test(text)) continue;
    if (!text.startsWith("-") && /^[^=]+=/.test(text)) continue;
    io.opaque(text.startsWith("-") ? `env option ${text}` : "env runs a command");
    return;
  }
  io.names("env_read", ["*"]);
}

/** printenv: reads the named variables, or all. */
export function printenv(args: ArgValue[], io: CommandIO): void {
  const names = args.filter((arg) => arg.text === null || !arg.text.startsWith("-"));
  if (names.length === 0 || names.some((arg) => arg.text === null)) {
    io.names("env_read", ["*"]);
    return;
  }
  io.names("env_read", names.map((arg) => arg.text!));
}

/** hostname's options that only print. */
const HOSTNAME_PRINTS =
  /^(-[aAdfiIsyVh]+|--(alias|all-fqdns|domain|fqdn|long|ip-address|all-ip-addresses|short|yp|nis|version|help))$/;

/**
 * hostname: prints names. An operand, `-F FILE` or `-b` sets the host (or, with `-y`, the NIS
 * domain) name, which no effect kind says, like `date -s`: anything but a printing option is opaque.
 */
export function hostname(args: ArgValue[], io: CommandIO): void {
  if (args.every((arg) => arg.text !== null && HOSTNAME_PRINTS.test(arg.text))) return;
  io.opaque("hostname sets the host name");
}

/** Commands with no effect of their own. */
export const NOTHING: CommandHandler = () => {};
