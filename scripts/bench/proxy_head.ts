/**
 * What a slowly sent HTTP head costs the kernel's proxy (P-NET-1): an agent with a net grant may
 * hold 128 connections to it, each sending its head a byte at a time, so the proxy's work per byte
 * must not grow with the bytes before it. This process holds the real proxy (`NetProxy`); a python3
 * process sends an 8 KiB head (a refused `GET http://…`) one byte per write, a write every 1 ms,
 * to the proxy and, for the cost of reading alone, to a listener here that reads and discards.
 * Prints this process's CPU (ms) for each, in rounds that alternate; asserts nothing.
 *
 *   scripts/deno.sh run -A scripts/bench/proxy_head.ts [--rounds 3] [--bytes 8192]
 */
import { parseArgs } from "node:util";
import { NetProxy } from "../../src/kernel/net/proxy.ts";
import { PROXY_SOCKET } from "../../src/kernel/net/inside.ts";
import { cpuMs } from "../../tests/_support/proc.ts";

const { values } = parseArgs({
  args: Deno.args,
  options: { rounds: { type: "string", default: "3" }, bytes: { type: "string", default: "8192" } },
});
const ROUNDS = Number(values.rounds);
const BYTES = Number(values.bytes);

const encoder = new TextEncoder();
const start = "GET http://refused.example/ HTTP/1.1\r\nX-Pad: ";
const head = encoder.encode(`${start}${"a".repeat(BYTES - start.length - 4)}\r\n\r\n`);

/** Python: sends stdin to the Unix socket argv[1] a byte per write, 1 ms apart, then reads. */
const SENDER = `import socket, sys, time
data = sys.stdin.buffer.read()
s = socket.socket(socket.AF_UNIX)
s.connect(sys.argv[1])
for i in range(len(data)):
    s.send(data[i:i + 1])
    time.sleep(0.001)
s.recv(4096)
`;

/**
 * Has a separate process send `head` to the Unix socket at `path` a byte per write, 1 ms apart;
 * the CPU (ms) this process, which serves the socket, spent meanwhile.
 */
async function paced(path: string): Promise<number> {
  const before = cpuMs(Deno.pid);
  const child = new Deno.Command("python3", {
    args: ["-c", SENDER, path],
    stdin: "piped",
    stdout: "null",
  }).spawn();
  const writer = child.stdin.getWriter();
  await writer.write(head);
  await writer.close();
  await child.status;
  return cpuMs(Deno.pid) - before;
}

const dir = await Deno.makeTempDir({ prefix: "shoal-bench-proxy-head-" });
const proxy = new NetProxy(dir, () => {});
const proxyDir = proxy.endpoint("bench", {
  principal: "agent:bench",
  grants: ["granted.example:443"],
  port: 0,
  forwards: [],
});
const discard = Deno.listen({ transport: "unix", path: `${dir}/discard` });
(async () => {
  for await (const conn of discard) {
    (async () => {
      const buf = new Uint8Array(4096);
      for (let got = 0; got < head.length;) {
        const n = await conn.read(buf);
        if (n === null) break;
        got += n;
      }
      await conn.write(new Uint8Array(1)).catch(() => {}); // the sender waits for an answer
      conn.close();
    })();
  }
})();

const proxyCpu: number[] = [];
const discardCpu: number[] = [];
try {
  for (let round = 0; round < ROUNDS; round++) {
    proxyCpu.push(await paced(`${proxyDir}/${PROXY_SOCKET}`));
    discardCpu.push(await paced(`${dir}/discard`));
  }
} finally {
  proxy.closeAll();
  discard.close();
  await Deno.remove(dir, { recursive: true });
}
console.log(
  `${BYTES}-byte head, one byte per write, 1 ms apart; CPU of this process (ms, 10 ms ticks)`,
);
console.log(`to the proxy:            ${proxyCpu.join(", ")}`);
console.log(`to a discarding reader:  ${discardCpu.join(", ")}`);
