import assert from "node:assert/strict";
import { RpcConnection } from "../../src/protocol/rpc_client.ts";
import { withTempDir } from "../_support/temp_dir.ts";
import { waitUntil } from "../_support/wait.ts";

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

/** A client connected to a peer socket of this test, in `dir`. */
async function connectedPair(dir: string) {
  const path = `${dir}/peer.sock`;
  const listener = Deno.listen({ transport: "unix", path });
  const accepted = listener.accept();
  const client = await RpcConnection.connect(path);
  return { listener, client, peer: await accepted };
}

Deno.test("notifications read together reach the handler in order at once; a pending handler holds back later reads", async () => {
  await withTempDir(async (dir) => {
    const { listener, client, peer } = await connectedPair(dir);
    const seen: number[] = [];
    let release!: () => void;
    const held = new Promise<void>((resolve) => release = resolve);
    client.onNotification = (_method, params) => {
      seen.push(params.n as number);
      return held;
    };
    const notify = (ns: number[]) =>
      peer.write(new TextEncoder().encode(
        ns.map((n) => `{"jsonrpc":"2.0","method":"event","params":{"n":${n}}}\n`).join(""),
      ));
    await notify([1, 2, 3]);
    assert.ok(await waitUntil(() => seen.length === 3, 5000), `seen ${seen}`);
    assert.deepEqual(seen, [1, 2, 3]);
    await notify([4]);
    await new Promise((r) => setTimeout(r, 100));
    assert.deepEqual(seen, [1, 2, 3], "nothing more is read while the handler is pending");
    release();
    assert.ok(await waitUntil(() => seen.length === 4, 5000), `seen ${seen}`);
    client.close();
    peer.close();
    listener.close();
  });
});

Deno.test("M-SUB-3, M-START-4: event frames go undecoded to onEventValues or decoded to onNotification, in the order read; a malformed event frame ends the connection", async () => {
  await withTempDir(async (dir) => {
    const { listener, client, peer } = await connectedPair(dir);
    const seen: string[] = [];
    const dec = new TextDecoder();
    client.onEventValues = ({ seq, payload }) => {
      seen.push(`bytes ${dec.decode(seq)} ${dec.decode(payload)}`);
    };
    client.onNotification = (method, params) => {
      seen.push(`decoded ${method} ${params.seq} ${JSON.stringify(params.payload)}`);
    };
    const event = (seq: number, payload: string) =>
      `{"jsonrpc":"2.0","method":"event","params":{"channel":"user.x","seq":${seq},"ts":1,"payload":${payload}}}\n`;
    await peer.write(new TextEncoder().encode(
      event(1, '{"i":1}') + event(2, '{"i":2.0}') + event(3, '"\\u00e9"') + event(4, "[4]"),
    ));
    assert.ok(await waitUntil(() => seen.length === 4, 5000), `seen ${seen}`);
    assert.deepEqual(seen, [
      'bytes 1 {"i":1}',
      'decoded event 2 {"i":2}',
      'decoded event 3 "é"',
      "bytes 4 [4]",
    ]);
    await peer.write(new TextEncoder().encode(event(5, '{"i":}') + event(6, "[6]")));
    await client.closed;
    assert.equal(seen.length, 4, "nothing of or after the malformed frame is delivered");
    peer.close();
    listener.close();
  });
});
