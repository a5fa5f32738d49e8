/**
 * The proxy's idle limit (P-NET-1): it frees what a finished client left half-open, never a
 * connection both ends still hold. A psql session through a forwarded loopback port, an ssh
 * session through the ProxyCommand, a database pool's connection, left idle for ten minutes were
 * closed under them (seen: a python3 socket to a granted 127.0.0.1 port read EOF after 630 s).
 * The relay is driven over real sockets with a limit of 100 ms in place of ten minutes.
 */
import assert from "node:assert/strict";
import { relay } from "../../../src/kernel/net/relay.ts";
import { delay } from "../../_support/wait.ts";

/** A connected pair of TCP sockets on loopback. */
async function pair(): Promise<[Deno.TcpConn, Deno.TcpConn]> {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const [a, b] = await Promise.all([
    Deno.connect({ hostname: "127.0.0.1", port: listener.addr.port }),
    listener.accept(),
  ]);
  listener.close();
  return [a, b];
}

/** The client's end and the destination's end of a relayed pair whose idle limit is 100 ms. */
async function relayed(): Promise<
  { client: Deno.TcpConn; server: Deno.TcpConn; done: Promise<void> }
> {
  const [client, proxyClient] = await pair();
  const [proxyUpstream, server] = await pair();
  const done = relay(proxyClient, proxyUpstream, false, 100);
  return { client, server, done };
}

async function readOnce(conn: Deno.Conn): Promise<string | null> {
  const buf = new Uint8Array(16);
  const n = await conn.read(buf).catch(() => null);
  return n === null ? null : new TextDecoder().decode(buf.subarray(0, n));
}

Deno.test("P-NET-1 a relayed connection both ends hold stays open past the idle limit, however long it says nothing; one its client has ended is closed at the limit", async () => {
  const open = await relayed();
  await delay(600);
  await open.client.write(new TextEncoder().encode("late"));
  assert.equal(await readOnce(open.server), "late", "an idle open connection was closed");
  await open.server.write(new TextEncoder().encode("back"));
  assert.equal(await readOnce(open.client), "back");
  open.client.close();
  open.server.close();
  await open.done;

  // the client half-closes and the destination says nothing, ever: the limit frees the pair
  const left = await relayed();
  await left.client.closeWrite();
  assert.equal(await readOnce(left.server), null, "the client's end reached the destination");
  assert.equal(await readOnce(left.client), null, "the pair was closed at the limit");
  await left.done;
  left.client.close();
  left.server.close();
});
