/**
 * `shoal-kernel connect [--socket PATH] [--session NAME]`: connects to the kernel socket after
 * the trusted path check (G-SOCK-10) and copies bytes between stdio and the socket until either
 * side closes. It serves a facade built without `net` permission (M-PERM-3), so it imports only
 * what connecting needs: it starts once per kernel connection.
 */
import type { ByteWriter } from "../../protocol/frame_writer.ts";
import type { ByteReader } from "../../protocol/framing.ts";
import { READ_CHUNK } from "../../protocol/limits.ts";
import { parseCommandArgs, pathOption, stringOption, UsageError } from "../../protocol/cli_args.ts";
import {
  isUnreachable,
  RELAY_UNREACHABLE,
  relayConnectedLine,
  unreachableReason,
} from "../../protocol/relay.ts";
import { SESSION_NAME, socketPath } from "../../protocol/socket_path.ts";
import { checkTrustedPath } from "../../protocol/trusted_path.ts";

/** Copies `from` to `to` through one reused buffer until `from` ends. */
async function copy(from: ByteReader, to: ByteWriter): Promise<void> {
  const buf = new Uint8Array(READ_CHUNK);
  while (true) {
    const n = await from.read(buf);
    if (n === null) return;
    for (let at = 0; at < n;) at += await to.write(buf.subarray(at, n));
  }
}

const OPTIONS = { socket: { type: "string" }, session: { type: "string" } } as const;

/** Runs the relay; returns 0 once either side closed, {@link RELAY_UNREACHABLE} or 1 when it could not connect. */
export async function runRelay(args: string[]): Promise<number> {
  const parsed = parseCommandArgs(args, OPTIONS, false);
  const session = stringOption(parsed, "session") ?? "default";
  if (!SESSION_NAME.test(session)) throw new UsageError(`invalid session name: ${session}`);
  const uid = Deno.uid() ?? 0;
  const { path, root } = socketPath(
    session,
    pathOption(parsed, "socket"),
    Deno.env.toObject(),
    uid,
  );
  let conn: Deno.UnixConn;
  try {
    checkTrustedPath(path, root, uid);
    conn = await Deno.connect({ transport: "unix", path });
  } catch (e) {
    if (isUnreachable(e)) {
      console.error(`shoal-kernel: ${unreachableReason(path, e)}`);
      return RELAY_UNREACHABLE;
    }
    console.error(`shoal-kernel: cannot reach ${path}: ${e instanceof Error ? e.message : e}`);
    return 1;
  }
  console.error(relayConnectedLine(path));
  // Whichever direction ends first ends the relay: the facade closed, or the kernel went away.
  await Promise.race([copy(Deno.stdin, conn), copy(conn, Deno.stdout)]).catch(() => {});
  return 0;
}
