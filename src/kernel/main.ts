import { socketPath } from "../protocol/socket_path.ts";
import { stateDir } from "../protocol/state_dir.ts";
import { HELP, USAGE } from "./cli/help.ts";
import { VERSION } from "../protocol/version.ts";
import { RELAY_COMMAND } from "../protocol/relay.ts";
import { runRelay } from "./cli/relay.ts";
import { parseServeArgs } from "./cli/serve_args.ts";
import { UsageError } from "../protocol/cli_args.ts";
import { StartupError } from "./daemon/socket_prep.ts";
import { printCliError } from "./cli/cli_error.ts";

// The daemon and the token and approval commands are imported when run: the relay, started
// once per facade connection, then loads only what connecting needs.

/** Whether `args` ask for the help, before or after a command (`token create --help`), ahead of any `--`. */
function asksHelp(args: string[]): boolean {
  const end = args.indexOf("--");
  return (end === -1 ? args : args.slice(0, end)).some((a) => a === "-h" || a === "--help");
}

/** Runs the kernel command line (K-CLI-1..3) and returns the exit status. */
async function main(argv: string[]): Promise<number> {
  const args = argv[0] === "--" ? argv.slice(1) : argv;
  const [command, ...rest] = args;
  try {
    if (command === RELAY_COMMAND) return await runRelay(rest);
    if (asksHelp(args)) {
      console.log(HELP.trimEnd());
      return 0;
    }
    if (command === "token") {
      const { runTokenCommand } = await import("./cli/token.ts");
      return await runTokenCommand(rest, Deno.env.toObject());
    }
    if (command === "onboard") {
      const { runOnboardCommand } = await import("./cli/onboard.ts");
      return await runOnboardCommand(rest, Deno.env.toObject());
    }
    if (command === "approve" || command === "deny" || command === "approvals") {
      const { runApprovalCommand } = await import("./cli/approval.ts");
      return await runApprovalCommand(command, rest);
    }
    if (command === "--version") {
      console.log(`shoal-kernel ${VERSION}`);
      return 0;
    }
    const opts = parseServeArgs(command === "serve" ? rest : args);
    const env = Deno.env.toObject();
    const dir = stateDir(opts.stateDir, env);
    const socket = socketPath(opts.session, opts.socket, env, Deno.uid() ?? 0);
    const { serve } = await import("./daemon/serve.ts");
    return await serve(opts, dir, socket);
  } catch (e) {
    if (e instanceof UsageError) {
      printCliError(e.message, USAGE);
      return 2;
    }
    if (e instanceof StartupError) {
      printCliError(e.message);
      return e.status;
    }
    printCliError(e instanceof Error ? e.message : String(e));
    return 1;
  }
}

if (import.meta.main) Deno.exit(await main(Deno.args));
