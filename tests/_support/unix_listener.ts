/** Test support: a Unix socket the host listens on, counting the connections it accepts. */

/** A host Unix socket at `path` (its directory made; mode 0777, so only a sandbox may refuse). */
export function unixListener(path: string): { accepted: () => number; close: () => void } {
  Deno.mkdirSync(path.slice(0, path.lastIndexOf("/")), { recursive: true });
  const listener = Deno.listen({ transport: "unix", path });
  Deno.chmodSync(path, 0o777);
  let n = 0;
  (async () => {
    for await (const conn of listener) {
      n++;
      conn.close();
    }
  })().catch(() => {});
  return { accepted: () => n, close: () => listener.close() };
}
