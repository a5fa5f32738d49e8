/**
 * The proxy's protocols and bounds on its Unix socket (P-NET-1, P-NET-2): HTTP forwarding and
 * refusals, SOCKS5 replies, an oversized head, and the refusals a watching run collects.
 */
import assert from "node:assert/strict";
import { sandboxNet } from "../../../src/kernel/net/destinations.ts";
import { PROXY_SOCKET } from "../../../src/kernel/net/inside.ts";
import { NetProxy } from "../../../src/kernel/net/proxy.ts";
import { withTempDir } from "../../_support/temp_dir.ts";
import { delay } from "../../_support/wait.ts";
import { readAll } from "../../_support/read_all.ts";

const encoder = new TextEncoder();
const decoder = new TextDecoder();

async function withProxy(
  body: (
    talk: (...pieces: Uint8Array[]) => Promise<Uint8Array>,
    events: unknown[],
    proxy: NetProxy,
    port: number,
  ) => Promise<void>,
): Promise<void> {
  await withTempDir(async (dir) => {
    const server = Deno.serve(
      { hostname: "127.0.0.2", port: 0, onListen: () => {} },
      (req) =>
        new Response(
          `path ${new URL(req.url).pathname} proxy-header ${
            req.headers.has("proxy-connection")
          } host ${req.headers.get("host")}\n`,
        ),
    );
    const events: unknown[] = [];
    const proxy = new NetProxy(dir, (channel, payload) => events.push({ channel, payload }));
    const port = server.addr.port;
    const socket = `${
      proxy.endpoint("s", sandboxNet("agent:a", [`127.0.0.2:${port}`])!).dir
    }/${PROXY_SOCKET}`;
    // each piece a write of its own, 20 ms after the one before: the proxy reads them apart
    const talk = async (...pieces: Uint8Array[]) => {
      const conn = await Deno.connect({ transport: "unix", path: socket });
      for (const [i, piece] of pieces.entries()) {
        if (i > 0) await delay(20);
        await conn.write(piece);
      }
      const answer = await readAll(conn);
      conn.close();
      return answer;
    };
    try {
      await body(talk, events, proxy, port);
    } finally {
      proxy.closeAll();
      await server.shutdown();
    }
  });
}

Deno.test("HTTP: a granted absolute URI is forwarded in origin form without proxy headers, its Host the URI's; another is 403 and published, its time exact (P-NET-2, W-NUM-1)", async () => {
  await withProxy(async (talk, events, proxy, port) => {
    const stop = proxy.watch("s", "agent:a");
    const ok = decoder.decode(
      await talk(encoder.encode(
        `GET http://127.0.0.2:${port}/a?b HTTP/1.1\r\nHost: other.example\r\nProxy-Connection: keep-alive\r\n\r\n`,
      )),
    );
    assert.match(ok, /^HTTP\/1\.1 200/);
    assert.match(ok, new RegExp(`path /a proxy-header false host 127\\.0\\.0\\.2:${port}\n`));
    const refused = decoder.decode(
      await talk(encoder.encode(`GET http://example.com:${port}/ HTTP/1.1\r\nHost: x\r\n\r\n`)),
    );
    assert.match(refused, /^HTTP\/1\.1 403 Forbidden/);
    assert.match(refused, /example\.com:\d+ is not in the net_connect grants of agent:a/);
    const connect = decoder.decode(
      await talk(encoder.encode(`CONNECT 10.0.0.1:443 HTTP/1.1\r\n\r\n`)),
    );
    assert.match(connect, /^HTTP\/1\.1 403/);
    assert.deepEqual(stop(), [`example.com:${port}`, "10.0.0.1:443"]);
    assert.deepEqual(
      events.map((e) => {
        const { channel, payload } = e as { channel: string; payload: Record<string, unknown> };
        return [channel, payload.principal, payload.host, payload.port];
      }),
      [["net.s", "agent:a", "example.com", port], ["net.s", "agent:a", "10.0.0.1", 443]],
    );
    // `at` is ns since the epoch, past 2^53: only a bigint is written exactly (W-NUM-1); a
    // Number of it came out rounded to a multiple of 256 ns.
    for (const e of events) {
      assert.equal(typeof (e as { payload: { at: unknown } }).payload.at, "bigint");
    }
    const bad = decoder.decode(await talk(encoder.encode(`GET https://x/ HTTP/1.1\r\n\r\n`)));
    assert.match(bad, /^HTTP\/1\.1 400/);
  });
});

Deno.test("HTTP: a head that comes in pieces is read to its end wherever a piece ends, in its blank line too (the proxy looks only at what is new, and the three bytes before)", async () => {
  await withProxy(async (talk, _events, _proxy, port) => {
    const head = `GET http://127.0.0.2:${port}/p HTTP/1.1\r\nHost: x\r\n\r\n`;
    for (const cut of [head.length - 1, head.length - 2, head.length - 3, 10]) {
      const answer = decoder.decode(
        await talk(encoder.encode(head.slice(0, cut)), encoder.encode(head.slice(cut))),
      );
      assert.match(answer, /^HTTP\/1\.1 200/, `cut at ${cut}`);
    }
    const bytes = encoder.encode(head);
    const byByte = await talk(...Array.from(bytes, (_, i) => bytes.subarray(i, i + 1)));
    assert.match(decoder.decode(byByte), /path \/p /);
  });
});

Deno.test("a request head past 16 KiB is answered 431 and closed, never buffered on", async () => {
  await withProxy(async (talk) => {
    const head = `GET http://127.0.0.2/ HTTP/1.1\r\nX: ${"a".repeat(20000)}\r\n\r\n`;
    assert.match(decoder.decode(await talk(encoder.encode(head))), /^HTTP\/1\.1 431/);
  });
});

Deno.test("SOCKS5: no-auth only, CONNECT only, reply 2 for a destination not granted, 0 for a granted one", async () => {
  await withProxy(async (talk, _events, _proxy, port) => {
    assert.deepEqual([...await talk(new Uint8Array([5, 1, 2]))], [5, 0xff]);
    const name = encoder.encode("example.com");
    const request = (cmd: number, host: Uint8Array, p: number) =>
      new Uint8Array([5, 1, 0, 5, cmd, 0, 3, host.length, ...host, p >> 8, p & 255]);
    assert.deepEqual([...await talk(request(1, name, 443))].slice(0, 4), [5, 0, 5, 2]);
    assert.deepEqual([...await talk(request(2, name, 443))].slice(0, 4), [5, 0, 5, 7]);
    const granted = encoder.encode("127.0.0.2");
    const get = encoder.encode(`GET /s HTTP/1.0\r\n\r\n`);
    const answer = await talk(new Uint8Array([...request(1, granted, port), ...get]));
    assert.deepEqual([...answer.subarray(0, 4)], [5, 0, 5, 0]);
    assert.match(decoder.decode(answer.subarray(12)), /path \/s/);
  });
});

Deno.test("SOCKS4 and SOCKS4a, which the proxy does not speak (P-NET-1: HTTP and SOCKS5), get reply 91 (rejected) as soon as their request is in, and bytes of no proxy protocol (a TLS ClientHello sent to the proxy's port) a 400: neither waits out the handshake limit for a head that never comes", async () => {
  await withProxy(async (talk, events, _proxy, port) => {
    const user = encoder.encode("me");
    const socks4 = new Uint8Array([4, 1, port >> 8, port & 255, 127, 0, 0, 2, ...user, 0]);
    const rejected = [0, 91, 0, 0, 0, 0, 0, 0];
    assert.deepEqual([...await talk(socks4)], rejected);
    const name = encoder.encode("127.0.0.2");
    const socks4a = new Uint8Array([4, 1, port >> 8, port & 255, 0, 0, 0, 1, 0, ...name, 0]);
    // its name a write after the rest: the proxy reads the request to its end before answering
    assert.deepEqual([...await talk(socks4a.subarray(0, 9), socks4a.subarray(9))], rejected);
    const hello = new Uint8Array([0x16, 3, 1, 0, 0xa5, 1, 0, 0, 0xa1, 3, 3]);
    assert.match(decoder.decode(await talk(hello)), /^HTTP\/1\.1 400 /);
    // no destination was refused: the protocol was
    assert.deepEqual(events, []);
  });
});
