import assert from "node:assert/strict";
import { RpcConnection } from "../../src/protocol/rpc_client.ts";
import { withTempDir } from "../_support/temp_dir.ts";

Deno.test("an id-null error from the peer leaves the client connection open for later replies", async () => {
  await withTempDir(async (dir) => {
    const path = `${dir}/peer.sock`;
    const listener = Deno.listen({ transport: "unix", path });
    const served = (async () => {
      const conn = await listener.accept();
      const buf = new Uint8Array(4096);
      await conn.read(buf);
      const enc = new TextEncoder();
      await conn.write(enc.encode(
        '{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"frame exceeds 16 MiB"}}\n' +
          '{"jsonrpc":"2.0","id":1,"result":{"ok":true}}\n',
      ));
      return conn;
    })();
    const client = await RpcConnection.connect(path);
    assert.deepEqual(await client.request("anything"), { ok: true });
    assert.equal(client.isClosed, false);
    client.close();
    (await served).close();
    listener.close();
  });
});
