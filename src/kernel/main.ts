import { socketPath } from "../protocol/socket_path.ts";
import { stateDir } from "../protocol/state_dir.ts";
import { runTokenCommand } from "./cli/token.ts";
import { runApprovalCommand } from "./cli/approval.ts";
import { parseServeArgs, UsageError } from "./cli/serve_args.ts";
import { serve } from "./daemon/serve.ts";
import { StartupError } from "./daemon/socket_prep.ts";

const USAGE =
  `usage: shoal-kernel [serve] [--session NAME] [--socket PATH] [--state-dir DIR] [--policy FILE] [--bash PATH]
       shoal-kernel token create <principal> <profile> [--cap CAP]... [--ttl SECONDS] [--state-dir DIR]
       shoal-kernel token list|revoke <id> [--state-dir DIR]
       shoal-kernel approve <plan_ref> | deny <plan_ref> [--reason TEXT] | approvals [--socket PATH] [--session NAME]`;

/** Runs the kernel command line (K-CLI-1..3) and returns the exit status. */
async function main(argv: string[]): Promise<number> {
  const args = argv[0] === "--" ? argv.slice(1) : argv;
  const [command, ...rest] = args;
  try {
    if (command === "token") return await runTokenCommand(rest, Deno.env.toObject());
    if (command === "approve" || command === "deny" || command === "approvals") {
      return await runApprovalCommand(command, rest);
    }
    if (command === "-h" || command === "--help") {
      console.log(USAGE);
      return 0;
    }
    const opts = parseServeArgs(command === "serve" ? rest : args);
    const env = Deno.env.toObject();
    const dir = stateDir(opts.stateDir, env);
    const socket = socketPath(opts.session, opts.socket, env, Deno.uid() ?? 0);
    return await serve(opts, dir, socket);
  } catch (e) {
    if (e instanceof UsageError) {
      console.error(`shoal-kernel: ${e.message}\n${USAGE}`);
      return 2;
    }
    if (e instanceof StartupError) {
      console.error(`shoal-kernel: ${e.message}`);
      return e.status;
    }
    console.error(`shoal-kernel: ${e instanceof Error ? e.message : String(e)}`);
    return 1;
  }
}

if (import.meta.main) Deno.exit(await main(Deno.args));
