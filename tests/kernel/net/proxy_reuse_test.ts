/**
 * The proxy's plain-HTTP forwarding against a client that keeps its proxy connection for its next
 * request (P-NET-1, P-NET-2): curl, given several `http://` URLs, sends each on the connection the
 * last one used unless the proxy's answer said it closes. The proxy forwards one request to one
 * destination per connection, so what came after went to the first destination, whatever its URL
 * named: an ungranted one was neither refused nor listed, and its answer was the first host's.
 */
import assert from "node:assert/strict";
import { sandboxNet } from "../../../src/kernel/net/destinations.ts";
import { PROXY_SOCKET } from "../../../src/kernel/net/inside.ts";
import { NetProxy } from "../../../src/kernel/net/proxy.ts";
import { exec } from "../../_support/exec.ts";
import { hostTest, NEEDS_TIER_B } from "../../_support/host.ts";
import { startKernel, type TestKernel } from "../../_support/kernel.ts";
import { createToken, PROJECT_AGENT, writePolicy } from "../../_support/principals.ts";
import type { Rec } from "../../_support/rec.ts";
import { sandbox } from "../../_support/sandbox.ts";
import { withTempDir } from "../../_support/temp_dir.ts";

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/**
 * An HTTP/1.1 server on 127.0.0.2 that answers `name` to every request on a connection and keeps
 * it open, `Connection: close` or not (as some servers do); `heard` gets each request line.
 */
function keepAliveServer(name: string, heard: string[]) {
  const listener = Deno.listen({ hostname: "127.0.0.2", port: 0 });
  const conns = new Set<Deno.Conn>();
  const serving = (async () => {
    for await (const conn of listener) {
      conns.add(conn);
      (async () => {
        let pending = "";
        const buf = new Uint8Array(4096);
        for (let n = await conn.read(buf); n !== null; n = await conn.read(buf)) {
          pending += decoder.decode(buf.subarray(0, n));
          for (let end = pending.indexOf("\r\n\r\n"); end >= 0; end = pending.indexOf("\r\n\r\n")) {
            heard.push(pending.slice(0, pending.indexOf("\r\n")));
            pending = pending.slice(end + 4);
            const body = `${name}\n`;
            await conn.write(
              encoder.encode(`HTTP/1.1 200 OK\r\nContent-Length: ${body.length}\r\n\r\n${body}`),
            );
          }
        }
      })().catch(() => {}).finally(() => {
        conns.delete(conn);
        try {
          conn.close();
        } catch {
          // closed already
        }
      });
    }
  })().catch(() => {});
  return {
    port: (listener.addr as Deno.NetAddr).port,
    async close() {
      listener.close();
      for (const conn of conns) conn.close();
      await serving;
    },
  };
}

hostTest(
  "P-NET-1 P-NET-2 curl's second and third http:// URLs, sent on the proxy connection of its first, reach their own destinations: a granted one answers, an ungranted one is refused with 403 and listed in net_refused (they all went to the first host, which answered for them, and nothing was refused)",
  NEEDS_TIER_B,
  async () => {
    const box = await sandbox();
    const proj = `${box.dir}/home/proj`;
    await Deno.mkdir(proj);
    const heardA: string[] = [];
    const heardB: string[] = [];
    const a = keepAliveServer("A", heardA);
    const b = keepAliveServer("B", heardB);
    // a port of 127.0.0.3 that no grant names: nothing need listen there
    const ungranted = `127.0.0.3:${a.port}`;
    let k: TestKernel | undefined;
    try {
      const policy = {
        "agent:n": {
          ...PROJECT_AGENT,
          net_connect: [`127.0.0.2:${a.port}`, `127.0.0.2:${b.port}`],
        },
      };
      const token = (await createToken(box, "agent:n", "agent:n")).secret;
      k = await startKernel(["--policy", await writePolicy(box, policy)], box);
      await exec(await k.attach("work"), `cd ${proj}`);
      const agent = await k.attach("work", token);
      const curl = `curl -sS -m 20 -w '%{http_code}\\n' ` +
        `http://127.0.0.2:${a.port}/a http://127.0.0.2:${b.port}/b http://${ungranted}/c`;
      const r = await exec(agent, `eval "$(echo ${btoa(curl)} | base64 -d)"`, {
        position: "value",
      });
      const value = r.value as Rec;
      // each answer's body, then its status
      const lines = (((value.out as Rec).v as string) ?? "").split("\n");
      assert.deepEqual(lines.slice(0, 4), ["A", "200", "B", "200"], JSON.stringify(value));
      assert.match(lines[4], /is not in the net_connect grants of agent:n$/);
      assert.equal(lines[5], "403");
      assert.deepEqual(value.net_refused, [ungranted]);
      assert.deepEqual(heardA, ["GET /a HTTP/1.1"]);
      assert.deepEqual(heardB, ["GET /b HTTP/1.1"]);
    } finally {
      await a.close();
      await b.close();
      if (k) await k.cleanup();
      else await box.cleanup();
    }
  },
);

/**
 * What a client of the proxy gets for a request forwarded to a server on 127.0.0.2 that answers
 * every connection with `answer` and then waits for the client to close.
 */
async function answerThroughProxy(answer: string): Promise<string> {
  let got = "";
  await withTempDir(async (dir) => {
    const server = Deno.listen({ hostname: "127.0.0.2", port: 0 });
    const serving = (async () => {
      for await (const conn of server) {
        await conn.read(new Uint8Array(4096));
        await conn.write(encoder.encode(answer));
        await conn.read(new Uint8Array(4096)).catch(() => null);
        conn.close();
      }
    })().catch(() => {});
    const port = (server.addr as Deno.NetAddr).port;
    const proxy = new NetProxy(dir, () => {});
    try {
      const at = proxy.endpoint("s", sandboxNet("agent:a", [`127.0.0.2:${port}`])!).dir;
      const conn = await Deno.connect({ transport: "unix", path: `${at}/${PROXY_SOCKET}` });
      await conn.write(encoder.encode(`GET http://127.0.0.2:${port}/ HTTP/1.1\r\nHost: x\r\n\r\n`));
      const buf = new Uint8Array(4096);
      // a bound, not a time measured: an answer held back would leave this read waiting for ever
      const stuck = setTimeout(() => conn.close(), 10_000);
      try {
        while (!got.endsWith("body")) {
          const n = await conn.read(buf);
          if (n === null) break;
          got += decoder.decode(buf.subarray(0, n));
        }
      } catch {
        // closed by the bound
      } finally {
        clearTimeout(stuck);
      }
      try {
        conn.close();
      } catch {
        // closed by the bound
      }
    } finally {
      proxy.closeAll();
      server.close();
      await serving;
    }
  });
  return got;
}

Deno.test("P-NET-1 a forwarded answer's head says Connection: close instead of its own Connection, Keep-Alive and Proxy-Connection; an interim 100, a 101's switch, a head past 16 KiB and what is no HTTP answer pass as they came", async () => {
  const interim = "HTTP/1.1 100 Continue\r\n\r\n";
  assert.equal(
    await answerThroughProxy(
      `${interim}HTTP/1.1 200 OK\r\nConnection: keep-alive\r\nKeep-Alive: timeout=5\r\n` +
        `Proxy-Connection: keep-alive\r\nContent-Length: 4\r\n\r\nbody`,
    ),
    `${interim}HTTP/1.1 200 OK\r\nContent-Length: 4\r\nConnection: close\r\n\r\nbody`,
  );
  const switched = "HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\n" +
    "Upgrade: websocket\r\n\r\nbody";
  assert.equal(await answerThroughProxy(switched), switched);
  // a head past 16 KiB (a long Content-Security-Policy) is not the proxy's to read: it passes whole
  const long = `HTTP/1.1 200 OK\r\nContent-Security-Policy: ${"a".repeat(20000)}\r\n` +
    "Content-Length: 4\r\n\r\nbody";
  assert.ok(await answerThroughProxy(long) === long);
  // no HTTP answer at all (a greeting that waits for the client) passes as it comes
  const greeting = "SSH-2.0-OpenSSH_9.2\r\nbody";
  assert.equal(await answerThroughProxy(greeting), greeting);
});
