import { RpcError } from "../../protocol/errors.ts";
import { compactJson } from "../../protocol/rpc.ts";
import { RpcConnection } from "../../protocol/rpc_client.ts";
import { SESSION_NAME, socketPath } from "../../protocol/socket_path.ts";
import { checkTrustedPath } from "../../protocol/trusted_path.ts";
import { UsageError } from "./serve_args.ts";

/** Parsed `approve` / `deny` / `approvals` arguments (K-CLI-3). */
interface ApprovalArgs {
  planRef?: string;
  reason?: string;
  socket?: string;
  session: string;
}

function parseArgs(command: string, args: string[]): ApprovalArgs {
  const out: ApprovalArgs = { session: "default" };
  const positional: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const flag = args[i];
    if (
      flag === "--socket" || flag === "--session" || (flag === "--reason" && command === "deny")
    ) {
      const value = args[++i];
      if (value === undefined) throw new UsageError(`${flag} needs a value`);
      if (flag === "--socket") out.socket = value;
      else if (flag === "--session") out.session = value;
      else out.reason = value;
    } else if (flag.startsWith("--")) throw new UsageError(`unknown argument: ${flag}`);
    else positional.push(flag);
  }
  const wanted = command === "approvals" ? 0 : 1;
  if (positional.length !== wanted) {
    throw new UsageError(wanted ? `${command} needs one <plan_ref>` : "approvals takes no operand");
  }
  if (!SESSION_NAME.test(out.session)) throw new UsageError(`invalid session name: ${out.session}`);
  out.planRef = positional[0];
  return out;
}

/** Runs `shoal-kernel approve|deny|approvals` as the local human and prints the result (K-CLI-3). */
export async function runApprovalCommand(command: string, args: string[]): Promise<number> {
  const opts = parseArgs(command, args);
  const env = Deno.env.toObject();
  const uid = Deno.uid() ?? 0;
  const { path, root } = socketPath(opts.session, opts.socket, env, uid);
  let conn: RpcConnection;
  try {
    await checkTrustedPath(path, root, uid);
    conn = await RpcConnection.connect(path);
  } catch (e) {
    console.error(`shoal-kernel: cannot reach ${path}: ${e instanceof Error ? e.message : e}`);
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
    console.log(compactJson(result));
    return 0;
  } catch (e) {
    if (e instanceof RpcError) console.error(`shoal-kernel: ${e.message} (${e.code})`);
    else console.error(`shoal-kernel: ${e instanceof Error ? e.message : e}`);
    return 1;
  } finally {
    conn.close();
  }
}
