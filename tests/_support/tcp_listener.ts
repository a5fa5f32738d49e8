/** Test support: a TCP listener on 127.0.0.1 that accepts and closes every connection. */

/** Runs `body` with the port of a fresh loopback listener, closed afterwards. */
export async function withTcpListener(body: (port: number) => Promise<void>): Promise<void> {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const accepting = (async () => {
    for await (const conn of listener) conn.close();
  })().catch(() => {});
  try {
    await body((listener.addr as Deno.NetAddr).port);
  } finally {
    listener.close();
    await accepting;
  }
}
