/**
 * A client that leaves the proxy (P-NET-1) while its destination is being connected (curl's
 * `-m`, a killed process) leaves no connection to that destination behind: the proxy's answer
 * to it fails, and the connection just made must be closed with it, not held by the kernel.
 */
import assert from "node:assert/strict";
import { withTempDir } from "../../_support/temp_dir.ts";
import { waitUntil } from "../../_support/wait.ts";
import { sandboxNet } from "../../../src/kernel/net/destinations.ts";
import { PROXY_SOCKET } from "../../../src/kernel/net/inside.ts";
import { NetProxy } from "../../../src/kernel/net/proxy.ts";

const encoder = new TextEncoder();

/**
 * How many connections the proxy made to a destination for 20 clients that each `ask` for it
 * and leave before any answer, and how many of those stay open.
 */
async function leftOpen(
  ask: (client: Deno.Conn, port: number) => Promise<void>,
): Promise<{ made: number; open: number }> {
  let result = { made: 0, open: -1 };
  await withTempDir(async (dir) => {
    const destination = Deno.listen({ hostname: "127.0.0.2", port: 0 });
    const port = (destination.addr as Deno.NetAddr).port;
    let accepted = 0;
    let ended = 0;
    const reading = new Set<Promise<void>>();
    const conns: Deno.Conn[] = [];
    const accepting = (async () => {
      for await (const conn of destination) {
        accepted++;
        conns.push(conn);
        const done: Promise<void> = conn.readable.pipeTo(new WritableStream()).catch(() => {})
          .finally(() => ended++);
        reading.add(done);
      }
    })().catch(() => {});
    const proxy = new NetProxy(dir, () => {});
    const socket = `${
      proxy.endpoint("s", sandboxNet("agent:a", [`127.0.0.2:${port}`])!).dir
    }/${PROXY_SOCKET}`;
    try {
      for (let i = 0; i < 20; i++) {
        const client = await Deno.connect({ transport: "unix", path: socket });
        await ask(client, port);
        client.close();
      }
      // every client reached the destination (or left before), and what was reached ends
      await waitUntil(() => accepted > 0 && ended === accepted, 5000).catch(() => {});
      result = { made: accepted, open: accepted - ended };
    } finally {
      proxy.closeAll();
      destination.close();
      await accepting;
      // what the proxy left open would keep its reader waiting
      for (const conn of conns) {
        try {
          conn.close();
        } catch {
          // closed by its reader already
        }
      }
      await Promise.all(reading);
    }
  });
  return result;
}

Deno.test("P-NET-1 an HTTP CONNECT client gone before the tunnel is up leaves no connection to its destination open", async () => {
  const { made, open } = await leftOpen(async (client, port) => {
    await client.write(encoder.encode(`CONNECT 127.0.0.2:${port} HTTP/1.1\r\nHost: x\r\n\r\n`));
  });
  assert.ok(made > 0);
  assert.equal(open, 0);
});

Deno.test("P-NET-1 a SOCKS5 client gone before its reply leaves no connection to its destination open", async () => {
  const { made, open } = await leftOpen(async (client, port) => {
    await client.write(new Uint8Array([5, 1, 0]));
    // the greeting's answer, then the request, and gone
    await client.read(new Uint8Array(2));
    await client.write(new Uint8Array([5, 1, 0, 1, 127, 0, 0, 2, port >> 8, port & 255]));
  });
  assert.ok(made > 0);
  assert.equal(open, 0);
});
