/**
 * A WebSocket over `ws://` through the proxy (P-NET-1): a client that sends its upgrade as an
 * absolute-URI request (an HTTP/1.1 client that does not tunnel plain http) reaches
 * a granted server's WebSocket, whose 101 the proxy passes with all that follows it.
 */
import assert from "node:assert/strict";
import { sandboxNet } from "../../../src/kernel/net/destinations.ts";
import { PROXY_SOCKET } from "../../../src/kernel/net/inside.ts";
import { NetProxy } from "../../../src/kernel/net/proxy.ts";
import { withTempDir } from "../../_support/temp_dir.ts";

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** Reads `conn` until it holds at least `n` bytes past the head's blank line (or EOF). */
async function readPast(conn: Deno.Conn, n: number): Promise<Uint8Array> {
  const bytes: number[] = [];
  const buf = new Uint8Array(4096);
  const end = () => decoder.decode(Uint8Array.from(bytes)).indexOf("\r\n\r\n");
  while (end() < 0 || bytes.length < end() + 4 + n) {
    const got = await conn.read(buf);
    if (got === null) break;
    bytes.push(...buf.subarray(0, got));
  }
  return Uint8Array.from(bytes);
}

Deno.test("P-NET-1 a WebSocket upgrade sent as an http:// absolute-URI request reaches a granted server: its 101 comes back and a message is echoed (the proxy replaced the client's Connection: Upgrade with Connection: close, so the server saw no upgrade asked for: Deno.upgradeWebSocket threw, answered 500)", async () => {
  await withTempDir(async (dir) => {
    const server = Deno.serve({ hostname: "127.0.0.2", port: 0, onListen: () => {} }, (req) => {
      const { socket, response } = Deno.upgradeWebSocket(req);
      socket.onmessage = (e) => socket.send(`echo ${e.data}`);
      return response;
    });
    const port = server.addr.port;
    const proxy = new NetProxy(dir, () => {});
    const socket = `${
      proxy.endpoint("s", sandboxNet("agent:a", [`127.0.0.2:${port}`])!).dir
    }/${PROXY_SOCKET}`;
    const conn = await Deno.connect({ transport: "unix", path: socket });
    try {
      await conn.write(encoder.encode(
        `GET http://127.0.0.2:${port}/ HTTP/1.1\r\nHost: 127.0.0.2:${port}\r\n` +
          "Connection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\n" +
          "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n",
      ));
      const head = decoder.decode(await readPast(conn, 0));
      assert.match(head, /^HTTP\/1\.1 101 /, head);
      // a masked text frame "hi"; the echo comes back unmasked: 0x81, its length, its text
      const mask = [1, 2, 3, 4];
      const hi = encoder.encode("hi").map((byte, i) => byte ^ mask[i % 4]);
      await conn.write(new Uint8Array([0x81, 0x80 | hi.length, ...mask, ...hi]));
      const frame = new Uint8Array(9);
      for (let at = 0; at < frame.length;) {
        const got = await conn.read(frame.subarray(at));
        assert.notEqual(got, null, "the echo came");
        at += got!;
      }
      assert.deepEqual([...frame.subarray(0, 2)], [0x81, 7]);
      assert.equal(decoder.decode(frame.subarray(2)), "echo hi");
    } finally {
      conn.close();
      proxy.closeAll();
      await server.shutdown();
    }
  });
});
