import { UsageError } from "./src/protocol/usage_error.ts";
import { VERSION } from "./src/protocol/version.ts";
import { terminalJson } from "./src/protocol/unshowable.ts";
import {
  type Command,
  EnvReader,
  errorText,
  NO_ARGUMENTS,
  resolveConfig,
} from "./src/mcp/config.ts";
import { KernelClient } from "./src/mcp/kernel_client.ts";

// Only what finds, connects to or autostarts the kernel is imported before it is spawned: the
// MCP server's modules and the other commands' load after (issue 33: half of the facade's
// modules, compiled before the kernel's spawn held up the cold first exec).

function log(line: string): void {
  console.error(line);
}

/** shoal-mcp: the MCP facade on stdio (SPEC §11). Exits 2 on usage errors, else 0. */
async function main(args: string[]): Promise<number> {
  let command: Command;
  let config;
  try {
    // node:util (parseArgs) is loaded only for a command line to parse (issue 33).
    command = args.length === 0
      ? NO_ARGUMENTS
      : (await import("./src/mcp/command_line.ts")).parseCommandLine(args);
    if (command.action === "print-config") {
      return await (await import("./src/mcp/print_config.ts")).printConfig(command, log);
    }
    if (command.action === "help") {
      console.log((await import("./src/mcp/help.ts")).HELP.trimEnd());
      return 0;
    }
    if (command.action !== "serve") {
      console.log(`shoal-mcp ${VERSION}`);
      return 0;
    }
    config = resolveConfig(command.flags, new EnvReader(log));
  } catch (e) {
    if (!(e instanceof UsageError)) throw e;
    // The argument it repeats may hold escape sequences a terminal would run (K-CLI-3's rule).
    log(`shoal-mcp: ${terminalJson(errorText(e))}`);
    log((await import("./src/mcp/help.ts")).USAGE);
    return 2;
  }
  const kernel = new KernelClient(config, log);
  // M-START-1: try at startup, failures logged once. First of all: a kernel autostarted now
  // loads its modules while the facade sets itself up (issue 33: the cold first exec).
  kernel.connection().catch(() => {});
  await (await import("./src/mcp/serve_stdio.ts")).serveStdio(kernel, log);
  return 0;
}

if (import.meta.main) Deno.exit(await main(Deno.args));
