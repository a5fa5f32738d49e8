// The least a facade can do with an event: a process that attaches to the kernel at argv[0],
// subscribes to argv[1], and copies every read of its socket to stdout unparsed. Started by
// scripts/bench/event_subscriber.ts (for events.ts) to show what the process hop alone costs on this machine.
// Run: deno run -A scripts/bench/event_forwarder.ts <socket> <channel>
const [path, channel] = Deno.args;
const conn = await Deno.connect({ transport: "unix", path });
const frames = [
  {
    id: 1,
    method: "session.attach",
    params: { session: "default", token: null, client: { kind: "bench", tty: false } },
  },
  { id: 2, method: "events.subscribe", params: { channel } },
].map((f) => JSON.stringify({ jsonrpc: "2.0", ...f }) + "\n");
await conn.write(new TextEncoder().encode(frames.join("")));
const buf = new Uint8Array(64 * 1024);
while (true) {
  const n = await conn.read(buf);
  if (n === null) break;
  let at = 0;
  while (at < n) at += Deno.stdout.writeSync(buf.subarray(at, n));
}
