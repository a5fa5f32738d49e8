import { UsageError } from "./src/protocol/cli_args.ts";
import { VERSION } from "./src/protocol/version.ts";
import { clientConfig, thisInstall } from "./src/mcp/client_config.ts";
import {
  type Command,
  EnvReader,
  errorText,
  parseCommandLine,
  resolveConfig,
} from "./src/mcp/config.ts";
import { HELP, USAGE } from "./src/mcp/help.ts";
import { KernelClient } from "./src/mcp/kernel_client.ts";
import { FacadeServer } from "./src/mcp/server.ts";
import { StdioTransport } from "./src/mcp/stdio_transport.ts";
import { stdoutWriter } from "./src/mcp/stdout_writer.ts";

/** How long requests in flight at stdin EOF may still be answered before the facade exits. */
const EOF_DRAIN_MS = 5000;

function log(line: string): void {
  console.error(line);
}

/** shoal-mcp: the MCP facade on stdio (SPEC §11). Exits 2 on usage errors, else 0. */
async function main(args: string[]): Promise<number> {
  let command: Command;
  let config;
  try {
    command = parseCommandLine(args);
    if (command.action !== "serve") {
      console.log(
        command.action === "help"
          ? HELP.trimEnd()
          : command.action === "version"
          ? `shoal-mcp ${VERSION}`
          : clientConfig(command.client, thisInstall()),
      );
      return 0;
    }
    config = resolveConfig(command.flags, new EnvReader(log));
  } catch (e) {
    if (!(e instanceof UsageError)) throw e;
    log(`shoal-mcp: ${errorText(e)}`);
    log(USAGE);
    return 2;
  }
  const transport = new StdioTransport(Deno.stdin, stdoutWriter, EOF_DRAIN_MS);
  const kernel = new KernelClient(config, log);
  const facade = new FacadeServer(kernel, transport, log);
  await facade.start();
  kernel.connection().catch(() => {}); // M-START-1: try at startup; failures are logged once
  await transport.finished;
  facade.subscriptions.closeAll();
  kernel.close();
  return 0;
}

if (import.meta.main) Deno.exit(await main(Deno.args));
