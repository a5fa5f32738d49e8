/** Test support: everything a connection sends until it closes, bounded. */

/** Everything `conn` sends until it closes (or 64 KiB). */
export async function readAll(conn: Deno.Conn): Promise<Uint8Array> {
  const chunks: number[] = [];
  const buf = new Uint8Array(4096);
  while (chunks.length < 65536) {
    const n = await conn.read(buf).catch(() => null);
    if (n === null) break;
    chunks.push(...buf.subarray(0, n));
  }
  return new Uint8Array(chunks);
}
