// The least a facade can do with a request: a process that attaches to the kernel at argv[0] and
// then copies its stdin to the socket and the socket to its stdout, unparsed (the attach reply is
// passed on too). Started by scripts/bench/facade_stages.ts to show what two process hops alone
// cost on this machine: the floor under the facade's share of an exec.
// Run: deno run -A scripts/bench/exec_forwarder.ts <socket>
const [path] = Deno.args;
const conn = await Deno.connect({ transport: "unix", path });
const attach = {
  jsonrpc: "2.0",
  id: 0,
  method: "session.attach",
  params: { session: "default", token: null, client: { kind: "bench", tty: false } },
};
await conn.write(new TextEncoder().encode(JSON.stringify(attach) + "\n"));
(async () => {
  const buf = new Uint8Array(64 * 1024);
  while (true) {
    const n = await Deno.stdin.read(buf);
    if (n === null) break;
    for (let at = 0; at < n;) at += await conn.write(buf.subarray(at, n));
  }
  conn.close();
})();
const buf = new Uint8Array(64 * 1024);
while (true) {
  const n = await conn.read(buf).catch(() => null);
  if (n === null) break;
  for (let at = 0; at < n;) at += Deno.stdout.writeSync(buf.subarray(at, n));
}
