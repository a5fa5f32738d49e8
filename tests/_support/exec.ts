/** Test support: the `exec` request every kernel test sends. */
import type { RpcConnection } from "../../src/protocol/rpc_client.ts";
import type { Rec } from "./rec.ts";

/** Sends `exec {src, ...extra}` on a connection and returns its result. */
export function exec(conn: RpcConnection, src: string, extra: Rec = {}): Promise<Rec> {
  return conn.request("exec", { src, ...extra }) as Promise<Rec>;
}
