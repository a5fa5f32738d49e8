import { parseCommandArgs, pathOption, stringOption, UsageError } from "../../protocol/cli_args.ts";
import { RpcError } from "../../protocol/errors.ts";
import { compactJson } from "../../protocol/rpc.ts";
import { RpcConnection } from "../../protocol/rpc_client.ts";
import { SESSION_NAME, socketPath } from "../../protocol/socket_path.ts";
import { checkTrustedPath } from "../../protocol/trusted_path.ts";
import { printCliError } from "./cli_error.ts";
import { terminalJson } from "../../protocol/unshowable.ts";

/** Parsed `approve` / `deny` / `approvals` arguments (K-CLI-3). */
interface ApprovalArgs {
  planRef?: string;
  reason?: string;
  socket?: string;
  session: string;
}

const OPTIONS = { socket: { type: "string" }, session: { type: "string" } } as const;
const DENY_OPTIONS = { ...OPTIONS, reason: { type: "string" } } as const;

function parseApprovalArgs(command: string, args: string[]): ApprovalArgs {
  const parsed = parseCommandArgs(args, command === "deny" ? DENY_OPTIONS : OPTIONS, true);
  const wanted = command === "approvals" ? 0 : 1;
  if (parsed.positionals.length !== wanted) {
    throw new UsageError(wanted ? `${command} needs one <plan_ref>` : "approvals takes no operand");
  }
  const session = stringOption(parsed, "session") ?? "default";
  if (!SESSION_NAME.test(session)) throw new UsageError(`invalid session name: ${session}`);
  return {
    planRef: parsed.positionals[0],
    reason: stringOption(parsed, "reason"),
    socket: pathOption(parsed, "socket"),
    session,
  };
}

/** Runs `shoal-kernel approve|deny|approvals` as the local human and prints the result (K-CLI-3). */
export async function runApprovalCommand(command: string, args: string[]): Promise<number> {
  const opts = parseApprovalArgs(command, args);
  const env = Deno.env.toObject();
  const uid = Deno.uid() ?? 0;
  const { path, root } = socketPath(opts.session, opts.socket, env, uid);
  let conn: RpcConnection;
  try {
    checkTrustedPath(path, root, uid);
    conn = await RpcConnection.connect(path);
  } catch (e) {
    const why = e instanceof Error ? e.message : String(e);
    printCliError(`cannot reach ${path}: ${why}`);
    return 1;
  }
  try {
    await conn.request("session.attach", {
      session: opts.session,
      token: null,
      client: { kind: "cli", tty: false },
    });
    const result = command === "approve"
      ? await conn.request("approval.grant", { plan_ref: opts.planRef })
      : command === "deny"
      ? await conn.request("approval.deny", { plan_ref: opts.planRef, reason: opts.reason ?? null })
      : await conn.request("approval.list", {});
    // The agent's text (a plan's src, its paths) is shown in the human's terminal.
    console.log(terminalJson(compactJson(result)));
    return 0;
  } catch (e) {
    // A message may repeat the plan ref the human pasted from an agent's words: its controls
    // are shown as escapes, as the listing's are, not run by the terminal.
    const message = e instanceof RpcError
      ? `${e.message} (${e.code})`
      : String(e instanceof Error ? e.message : e);
    printCliError(message);
    return 1;
  } finally {
    conn.close();
  }
}
