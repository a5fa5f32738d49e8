/**
 * shoal-mcp's command line, parsed by the one parser of every CLI (`protocol/cli_args.ts`,
 * `node:util` parseArgs). The facade imports this module only when it has arguments: `node:util`
 * loads Deno's Node layer, which then stays resident (issue 33).
 */
import { parseCommandArgs, stringOption, UsageError } from "../protocol/cli_args.ts";
import { CLIENTS, isClient } from "./client_config.ts";
import type { Command, CommandLine } from "./config.ts";

const OPTIONS = {
  socket: { type: "string" },
  session: { type: "string" },
  token: { type: "string" },
  help: { type: "boolean", short: "h" },
  version: { type: "boolean" },
  "print-config": { type: "string" },
  project: { type: "string" },
  "as-human": { type: "boolean" },
} as const;

/**
 * Parses `[--socket PATH] [--session NAME] [--token TOKEN] [--project DIR] | --help | --version |
 * --print-config CLIENT [--project DIR | --as-human]` (`--x v` or `--x=v`); throws
 * {@link UsageError} (M-CLI-1/2/4/6, M-ONB-1).
 */
export function parseCommandLine(args: readonly string[]): Command {
  // `deno task mcp -- ARGS` may forward the `--`.
  const parsed = parseCommandArgs(args[0] === "--" ? args.slice(1) : args, OPTIONS, false);
  if (parsed.values.help === true) return { action: "help" };
  if (parsed.values.version === true) return { action: "version" };
  const client = stringOption(parsed, "print-config");
  if (client !== undefined) {
    if (!isClient(client)) {
      throw new UsageError(`unknown client ${client}; one of ${CLIENTS.join(", ")}`);
    }
    // The printed configuration carries none of these: taken silently, the agent would get
    // another kernel or session than the one asked for.
    const stray = (["socket", "session", "token"] as const).find((key) =>
      parsed.values[key] !== undefined
    );
    if (stray !== undefined) {
      throw new UsageError(
        `--${stray} does not go with --print-config (only --project or --as-human)`,
      );
    }
    const project = stringOption(parsed, "project") || undefined;
    const asHuman = parsed.values["as-human"] === true;
    if (asHuman && project !== undefined) {
      throw new UsageError("--as-human gives no project: the agent runs as you, everywhere");
    }
    return { action: "print-config", client, project, asHuman };
  }
  if (parsed.values["as-human"] === true) throw new UsageError("--as-human needs --print-config");
  const flags: CommandLine = {};
  for (const key of ["socket", "session", "token", "project"] as const) {
    const value = stringOption(parsed, key);
    if (value !== undefined && value !== "") flags[key] = value;
  }
  return { action: "serve", flags };
}
