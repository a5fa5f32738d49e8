/**
 * What the proxy asks DNS (P-NET-1): a name only once a grant matches its `host:port`, so an
 * agent can carry nothing out in the names it asks for beyond what its grants already reach. The
 * kernel sees its own /etc/resolv.conf (a mount namespace, root only) naming a DNS server that
 * logs each query's name and answers "no such name".
 */
import assert from "node:assert/strict";
import { collectLines, type TestKernel } from "../../_support/kernel.ts";
import { exec } from "../../_support/exec.ts";
import { kernelWithEtc, NEEDS_ROOT } from "../../_support/etc_namespace.ts";
import { hostTest, NEEDS_TIER_B } from "../../_support/host.ts";
import { createToken, PROJECT_AGENT, writePolicy } from "../../_support/principals.ts";
import type { Rec } from "../../_support/rec.ts";
import { sandbox } from "../../_support/sandbox.ts";
import { waitUntil } from "../../_support/wait.ts";

/** A DNS server that prints each query's name and answers NXDOMAIN (python3, as root: port 53). */
const LOGGING_DNS = String.raw`
import socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind((sys.argv[1], 53))
print("ready", flush=True)
while True:
    data, peer = s.recvfrom(2048)
    i, labels = 12, []
    while i < len(data) and data[i] != 0:
        labels.append(data[i + 1:i + 1 + data[i]].decode("ascii", "replace"))
        i += 1 + data[i]
    print("query " + ".".join(labels).lower(), flush=True)
    s.sendto(data[:2] + b"\x81\x83\x00\x01\x00\x00\x00\x00\x00\x00" + data[12:i + 5], peer)
`;

/** Sends each request (Python bytes literals) to the proxy and prints the first answer line. */
const ASK = String.raw`
import os, socket
port = int(os.environ["HTTP_PROXY"].rsplit(":", 1)[1])
def socks(name, p):
    n = name.encode()
    return [b"\x05\x01\x00", b"\x05\x01\x00\x03" + bytes([len(n)]) + n + p.to_bytes(2, "big")]
for pieces in [
    [b"CONNECT a.granted.test:80 HTTP/1.1\r\n\r\n"],
    [b"CONNECT secret-one.other.test:80 HTTP/1.1\r\n\r\n"],
    [b"CONNECT secret-two.granted.test:81 HTTP/1.1\r\n\r\n"],
    [b"GET http://secret-three.other.test/ HTTP/1.1\r\nHost: b.granted.test\r\n\r\n"],
    socks("secret-four.other.test", 80),
    socks("c.granted.test", 80),
    [b"CONNECT d.granted.test.:80 HTTP/1.1\r\n\r\n"],
]:
    s = socket.create_connection(("127.0.0.1", port))
    for piece in pieces:
        s.sendall(piece)
        if len(pieces) > 1 and piece is pieces[0]: s.recv(2)
    print(repr(s.recv(200)[:12]))
    s.close()
`;

hostTest(
  "P-NET-1 the proxy asks DNS only for names a grant matches (with their port): of seven requests (CONNECT, an absolute URI, SOCKS5) under *.granted.test:80 and beside it, DNS sees a.granted.test, c.granted.test and d.granted.test (asked for as d.granted.test., fully qualified) and none of the others",
  NEEDS_TIER_B ?? NEEDS_ROOT,
  async () => {
    const box = await sandbox();
    const dnsAddress = "127.0.0.78";
    const dns = new Deno.Command("python3", {
      args: ["-c", LOGGING_DNS, dnsAddress],
      stdout: "piped",
      stderr: "null",
    }).spawn();
    const lines: string[] = [];
    const reading = collectLines(dns.stdout, lines);
    let k: TestKernel | undefined;
    try {
      await waitUntil(() => lines.includes("ready"), 10000);
      const proj = `${box.dir}/home/proj`;
      await Deno.mkdir(proj);
      const policy = { "agent:n": { ...PROJECT_AGENT, net_connect: ["*.granted.test:80"] } };
      const token = (await createToken(box, "agent:n", "agent:n")).secret;
      k = await kernelWithEtc(box, {
        hosts: "127.0.0.1 localhost\n",
        "resolv.conf": `nameserver ${dnsAddress}\noptions timeout:2 attempts:1\n`,
      }, ["--policy", await writePolicy(box, policy)]);
      await exec(await k.attach("work"), `cd ${proj}`);
      await Deno.writeTextFile(`${proj}/ask.py`, ASK);
      const r = await exec(await k.attach("work", token), "python3 ask.py", {
        position: "value",
        timeout_ms: 60000,
      });
      const value = r.value as Rec;
      assert.equal((value.err as Rec).v, "", JSON.stringify(value));
      const asked = new Set(lines.filter((l) => l.startsWith("query ")).map((l) => l.slice(6)));
      // d.granted.test. is d.granted.test written fully qualified: granted, and asked for
      assert.deepEqual([...asked].sort(), ["a.granted.test", "c.granted.test", "d.granted.test"]);
      assert.deepEqual(value.net_refused, [
        "secret-one.other.test:80",
        "secret-two.granted.test:81",
        "secret-three.other.test:80",
        "secret-four.other.test:80",
      ]);
    } finally {
      if (k) await k.cleanup();
      else await box.cleanup();
      dns.kill("SIGKILL");
      await dns.status;
      await reading;
    }
  },
);
