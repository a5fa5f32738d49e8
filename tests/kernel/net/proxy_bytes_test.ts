/**
 * The proxy forwards an `http://` request as its client sent it, and passes the answer as its
 * server sent it (P-NET-1), the proxy's own headers aside: bytes past ASCII in the target and in
 * header values (Latin-1 text, a cookie's raw bytes; RFC 9110 obs-text) went through a UTF-8
 * decoding and came out as U+FFFD.
 */
import assert from "node:assert/strict";
import { sandboxNet } from "../../../src/kernel/net/destinations.ts";
import { PROXY_SOCKET } from "../../../src/kernel/net/inside.ts";
import { NetProxy } from "../../../src/kernel/net/proxy.ts";
import { withTempDir } from "../../_support/temp_dir.ts";

const latin1 = (text: string) => Uint8Array.from(text, (c) => c.charCodeAt(0));
const asText = (bytes: Uint8Array) => String.fromCharCode(...bytes);

/** Reads `conn` until a blank line ends a head (or EOF), as one character per byte. */
async function readHead(conn: Deno.Conn): Promise<string> {
  const bytes: number[] = [];
  const buf = new Uint8Array(4096);
  while (!asText(Uint8Array.from(bytes)).includes("\r\n\r\n")) {
    const n = await conn.read(buf);
    if (n === null) break;
    bytes.push(...buf.subarray(0, n));
  }
  return asText(Uint8Array.from(bytes));
}

/**
 * The request head a server on 127.0.0.2 receives for `request` sent through the proxy, and
 * the client's answer when the server answers `answer`.
 */
async function exchange(
  request: (port: number) => Uint8Array,
  answer: Uint8Array,
): Promise<{ head: string; answered: string }> {
  let head = "", answered = "";
  await withTempDir(async (dir) => {
    const server = Deno.listen({ hostname: "127.0.0.2", port: 0 });
    const port = (server.addr as Deno.NetAddr).port;
    const proxy = new NetProxy(dir, () => {});
    try {
      const at = proxy.endpoint("s", sandboxNet("agent:a", [`127.0.0.2:${port}`])!).dir;
      const client = await Deno.connect({ transport: "unix", path: `${at}/${PROXY_SOCKET}` });
      await client.write(request(port));
      const conn = await server.accept();
      head = await readHead(conn);
      await conn.write(answer);
      answered = await readHead(client);
      conn.close();
      client.close();
    } finally {
      proxy.closeAll();
      server.close();
    }
  });
  return { head, answered };
}

Deno.test("P-NET-1 a forwarded http:// request and its answer keep the bytes of target and header values past ASCII (Latin-1 é, a cookie's 0xff 0xfe, UTF-8 ü) as they were sent", async () => {
  const { head, answered } = await exchange(
    (port) =>
      latin1(
        `GET http://127.0.0.2:${port}/caf\xe9?q=\xc3\xbc HTTP/1.1\r\nHost: x\r\n` +
          `X-Name: caf\xe9\r\nCookie: a=\xff\xfe\r\n\r\n`,
      ),
    latin1(
      `HTTP/1.1 200 OK\r\nContent-Disposition: attachment; filename="caf\xe9.txt"\r\n` +
        `Content-Length: 0\r\n\r\n`,
    ),
  );
  assert.ok(head.startsWith(`GET /caf\xe9?q=\xc3\xbc HTTP/1.1\r\n`), JSON.stringify(head));
  assert.ok(head.includes("\r\nX-Name: caf\xe9\r\n"), JSON.stringify(head));
  assert.ok(head.includes("\r\nCookie: a=\xff\xfe\r\n"), JSON.stringify(head));
  assert.ok(
    answered.includes('\r\nContent-Disposition: attachment; filename="caf\xe9.txt"\r\n'),
    JSON.stringify(answered),
  );
});
