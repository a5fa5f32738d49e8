/**
 * What an agent sends the proxy cannot make what the kernel hands back unbounded (P-NET-2,
 * V-ELIDE-2): refusals of destinations that are no DNS name are bounded like any other.
 */
import assert from "node:assert/strict";
import { exec } from "../../_support/exec.ts";
import { startKernel, type TestKernel } from "../../_support/kernel.ts";
import { hostTest, NEEDS_TIER_B } from "../../_support/host.ts";
import { createToken, PROJECT_AGENT, writePolicy } from "../../_support/principals.ts";
import type { Rec } from "../../_support/rec.ts";
import { sandbox } from "../../_support/sandbox.ts";
import { withTempDir } from "../../_support/temp_dir.ts";
import { sandboxNet } from "../../../src/kernel/net/destinations.ts";
import { PROXY_SOCKET } from "../../../src/kernel/net/inside.ts";
import { NetProxy } from "../../../src/kernel/net/proxy.ts";
import { readAll } from "../../_support/read_all.ts";

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/**
 * Sends each of `requests` on a connection of its own to a proxy granted only `127.0.0.2:1`, and
 * gives what came back, the events published and the refusals a watching run collected.
 */
async function proxied(
  requests: Uint8Array[],
): Promise<{ answers: Uint8Array[]; events: Rec[]; refused: string[] }> {
  let result: { answers: Uint8Array[]; events: Rec[]; refused: string[] } | undefined;
  await withTempDir(async (dir) => {
    const events: Rec[] = [];
    const proxy = new NetProxy(dir, (_channel, payload) => events.push(payload as Rec));
    const socket = `${
      proxy.endpoint("s", sandboxNet("agent:a", ["127.0.0.2:1"])!).dir
    }/${PROXY_SOCKET}`;
    const stop = proxy.watch("s", "agent:a");
    const answers: Uint8Array[] = [];
    try {
      for (const request of requests) {
        const conn = await Deno.connect({ transport: "unix", path: socket });
        await conn.write(request);
        answers.push(await readAll(conn));
        conn.close();
      }
    } finally {
      proxy.closeAll();
    }
    result = { answers, events, refused: stop() };
  });
  return result!;
}

/** Runs `src` (python3, hidden from the static analysis) as an agent granted `net`. */
async function agentRun(net: string[], python: string): Promise<Rec> {
  const box = await sandbox();
  const proj = `${box.dir}/home/proj`;
  await Deno.mkdir(proj);
  let k: TestKernel | undefined;
  try {
    const policy = { "agent:n": { ...PROJECT_AGENT, net_connect: net } };
    const token = (await createToken(box, "agent:n", "agent:n")).secret;
    k = await startKernel(["--policy", await writePolicy(box, policy)], box);
    await exec(await k.attach("work"), `cd ${proj}`);
    const conn = await k.attach("work", token);
    const src = `python3 -c "$(echo ${btoa(python)} | base64 -d)"`;
    return await exec(conn, `eval "$(echo ${btoa(src)} | base64 -d)"`, { position: "value" });
  } finally {
    if (k) await k.cleanup();
    else await box.cleanup();
  }
}

hostTest(
  "P-NET-2 V-ELIDE-2 an agent's CONNECTs to 100 distinct 16 KB 'names' leave an outcome of at most 64 KiB: each of its 100 net_refused is at most 253 characters (its start and end kept around an escaped …)",
  NEEDS_TIER_B,
  async () => {
    const python = `
import os, socket
port = int(os.environ['HTTP_PROXY'].rsplit(':', 1)[1])
for i in range(100):
    s = socket.create_connection(('127.0.0.1', port))
    s.sendall(b'CONNECT ' + b'x' * 16000 + str(i).encode() + b'.example:443 HTTP/1.1\\r\\n\\r\\n')
    while s.recv(4096):
        pass
    s.close()
print('sent')
`;
    const result = await agentRun(["127.0.0.2:1"], python);
    const wire = new TextEncoder().encode(JSON.stringify(result)).length;
    const value = result.value as Rec;
    const refusals = (value.net_refused as string[] | undefined) ?? [];
    assert.equal(refusals.length, 100, JSON.stringify(value).slice(0, 500));
    assert.ok(wire <= 65536, `the exec's result is ${wire} bytes`);
    assert.equal((value.out as Rec).v, "sent\n", "out travels inline, not elided for the refusals");
    for (const refused of refusals) {
      assert.ok(refused.length <= 253 + 6, `a refusal of ${refused.length} characters`);
    }
  },
);

Deno.test("P-NET-2 SOCKS5 names of 255 bytes none a letter: 100 refusals of them are each at most 253 characters, percent-escaped, still distinct where they differ early", async () => {
  const requests = [...Array(100).keys()].map((i) => {
    const name = new Uint8Array(255).fill(0x1b);
    name[0] = 0x41 + (i % 26);
    name[1] = 0x41 + Math.floor(i / 26);
    return new Uint8Array([5, 1, 0, 5, 1, 0, 3, 255, ...name, 1, 187]);
  });
  const { answers, events, refused } = await proxied(requests);
  assert.ok(answers.every((a) => a[3] === 2), "each is refused with reply 2");
  assert.equal(refused.length, 100);
  assert.equal(events.length, 100);
  for (const text of [...refused, ...events.map((e) => `${e.host}:443`)]) {
    assert.ok(text.length <= 253 + 4, `a refusal of ${text.length} characters`);
    assert.match(text, /^[A-Za-z0-9._%-]+:443$/);
  }
});

Deno.test("P-NET-2 an HTTP CONNECT to a host:port whose host is no host (a control byte, a zone id, 16 KB, a wildcard) is refused with 403 and published, bounded and escaped, as SOCKS5's are", async () => {
  const targets = [
    "\x1b[31mred:443",
    "[fe80::1%25eth0]:443",
    `${"x".repeat(16000)}.example:443`,
    "*.com:443",
  ];
  const { answers, events, refused } = await proxied(
    targets.map((t) => encoder.encode(`CONNECT ${t} HTTP/1.1\r\n\r\n`)),
  );
  for (const answer of answers) assert.match(decoder.decode(answer), /^HTTP\/1\.1 403 /);
  assert.equal(events.length, 4);
  assert.equal(refused.length, 4);
  assert.equal(refused[0], "%1B%5B31mred:443");
  assert.equal(refused[1], "%5Bfe80%3A%3A1%2525eth0%5D:443");
  assert.ok(refused[2].length <= 253 + 4, `${refused[2].length} characters`);
  // a wildcard is escaped: the refusal does not read as a grant of every .com host
  assert.equal(refused[3], "%2A.com:443");
});

hostTest(
  'P-NET-2 P-EVAL-1 a URL or /dev/tcp path whose host is a glob (http://*.com/, /dev/tcp/*.com/80) is never named as a destination to grant: neither the policy\'s refusal nor net_refused tells the human to add net_connect "*.com:80", which would grant every .com host',
  NEEDS_TIER_B,
  async () => {
    const box = await sandbox();
    const proj = `${box.dir}/home/proj`;
    await Deno.mkdir(proj);
    let k: TestKernel | undefined;
    try {
      const policy = { "agent:n": { ...PROJECT_AGENT, net_connect: ["127.0.0.2:1"] } };
      const token = (await createToken(box, "agent:n", "agent:n")).secret;
      k = await startKernel(["--policy", await writePolicy(box, policy)], box);
      await exec(await k.attach("work"), `cd ${proj}`);
      const conn = await k.attach("work", token);
      for (const src of ["curl -sS --max-time 5 'http://*.com/'", "echo x > '/dev/tcp/*.com/80'"]) {
        const said = await exec(conn, src, { position: "value" })
          .then((r) => JSON.stringify(r), (e) => JSON.stringify([e.message, e.data]));
        assert.ok(!said.includes("*.com:80"), said);
      }
    } finally {
      if (k) await k.cleanup();
      else await box.cleanup();
    }
  },
);
