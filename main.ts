import { UsageError } from "./src/protocol/usage_error.ts";
import { VERSION } from "./src/protocol/version.ts";
import { clientConfig, thisInstall } from "./src/mcp/client_config.ts";
import {
  type Command,
  EnvReader,
  errorText,
  NO_ARGUMENTS,
  resolveConfig,
} from "./src/mcp/config.ts";
import { HELP, USAGE } from "./src/mcp/help.ts";
import { FACADE_COMPACTION_GROWTH, heapCompaction } from "./src/protocol/heap_compaction.ts";
import { startIdleWork } from "./src/protocol/idle_work.ts";
import { KernelClient } from "./src/mcp/kernel_client.ts";
import { provision, ProvisionError } from "./src/mcp/onboard.ts";
import { projectSession } from "./src/protocol/project_session.ts";
import { RELEASE_KERNEL } from "./src/mcp/permissions.ts";
import { FacadeServer } from "./src/mcp/server.ts";
import { StdioTransport } from "./src/mcp/stdio_transport.ts";
import { stdoutWriter } from "./src/mcp/stdout_writer.ts";

/** How long requests in flight at stdin EOF may still be answered before the facade exits. */
const EOF_DRAIN_MS = 5000;

function log(line: string): void {
  console.error(line);
}

/**
 * `--print-config`: provisions the sandboxed agent and prints its configuration (M-ONB-1), or
 * with `--as-human` the unconfined one, with a warning. Exits 1 when provisioning failed.
 */
async function printConfig(
  command: Extract<Command, { action: "print-config" }>,
): Promise<number> {
  if (command.asHuman) {
    log(
      "shoal-mcp: warning: --as-human: this configuration has no token, so the agent acts as you: " +
        "unconfined, no sandbox, no approvals, your whole file system and network",
    );
    console.log(clientConfig(command.client, thisInstall(), null));
    return 0;
  }
  const env = new EnvReader(log);
  const kernel = env.get("SHOAL_KERNEL") ?? RELEASE_KERNEL;
  try {
    const install = thisInstall();
    const agent = await provision(
      kernel,
      env.get("PATH") ?? null,
      command.client,
      command.project,
      install.path,
    );
    console.log(clientConfig(command.client, install, agent));
    log(
      `session: agent:${command.client} works in this project's own session ` +
        `${projectSession(agent.project)} (another project gets another)`,
    );
    return 0;
  } catch (e) {
    if (!(e instanceof ProvisionError)) throw e;
    log(`shoal-mcp: ${e.message}; nothing printed`);
    return 1;
  }
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
    if (command.action === "print-config") return await printConfig(command);
    if (command.action !== "serve") {
      console.log(command.action === "help" ? HELP.trimEnd() : `shoal-mcp ${VERSION}`);
      return 0;
    }
    config = resolveConfig(command.flags, new EnvReader(log));
  } catch (e) {
    if (!(e instanceof UsageError)) throw e;
    log(`shoal-mcp: ${errorText(e)}`);
    log(USAGE);
    return 2;
  }
  const kernel = new KernelClient(config, log);
  // M-START-1: try at startup, failures logged once. First of all: a kernel autostarted now
  // loads its modules while the facade sets itself up (issue 33: the cold first exec).
  kernel.connection().catch(() => {});
  const transport = new StdioTransport(Deno.stdin, stdoutWriter, EOF_DRAIN_MS);
  const facade = new FacadeServer(kernel, transport, log);
  await facade.start();
  const compact = heapCompaction(FACADE_COMPACTION_GROWTH);
  const stopIdleWork = compact === null ? null : startIdleWork(compact);
  await transport.finished;
  stopIdleWork?.();
  facade.subscriptions.closeAll();
  kernel.close();
  return 0;
}

if (import.meta.main) Deno.exit(await main(Deno.args));
