/**
 * A principal past its share of the proxy's connections (P-NET-1, P-NET-2: every refusal is
 * visible) is told so in its protocol, not cut off with an empty reply it cannot tell from a
 * broken proxy or destination.
 */
import assert from "node:assert/strict";
import { withTempDir } from "../../_support/temp_dir.ts";
import { sandboxNet } from "../../../src/kernel/net/destinations.ts";
import { PROXY_SOCKET } from "../../../src/kernel/net/inside.ts";
import { NetProxy } from "../../../src/kernel/net/proxy.ts";
import { readAll } from "../../_support/read_all.ts";

const encoder = new TextEncoder();

/**
 * What a principal holding `held` idle proxy connections gets back for one more that `asks`,
 * and what a request by another principal gets meanwhile.
 */
async function pastShare(
  held: number,
  ask: (conn: Deno.Conn, port: number) => Promise<void>,
): Promise<{ answer: Uint8Array; other: string }> {
  let result: { answer: Uint8Array; other: string } = { answer: new Uint8Array(), other: "" };
  await withTempDir(async (dir) => {
    const server = Deno.serve(
      { hostname: "127.0.0.2", port: 0, onListen: () => {} },
      () => new Response("pong\n"),
    );
    const port = server.addr.port;
    const proxy = new NetProxy(dir, () => {});
    const socket = (principal: string, session: string) =>
      `${
        proxy.endpoint(session, sandboxNet(principal, [`127.0.0.2:${port}`])!).dir
      }/${PROXY_SOCKET}`;
    const greedy = socket("agent:greedy", "one");
    const other = socket("agent:other", "two");
    const conns: Deno.Conn[] = [];
    try {
      // each waits for a request head that is not sent yet, counted against the share
      for (let i = 0; i < held; i++) {
        conns.push(await Deno.connect({ transport: "unix", path: greedy }));
      }
      const extra = await Deno.connect({ transport: "unix", path: greedy });
      conns.push(extra);
      await ask(extra, port);
      const answer = await readAll(extra);
      const theirs = await Deno.connect({ transport: "unix", path: other });
      conns.push(theirs);
      await theirs.write(
        encoder.encode(`GET http://127.0.0.2:${port}/ HTTP/1.1\r\nHost: x\r\n\r\n`),
      );
      result = { answer, other: new TextDecoder().decode(await readAll(theirs)) };
    } finally {
      for (const conn of conns) conn.close();
      proxy.closeAll();
      await server.shutdown();
    }
  });
  return result;
}

Deno.test("P-NET-1 P-NET-2 an HTTP request past its principal's 128 proxy connections is answered 503 naming the limit, not closed unanswered; another principal is still served", async () => {
  const { answer, other } = await pastShare(128, async (conn, port) => {
    await conn.write(encoder.encode(`CONNECT 127.0.0.2:${port} HTTP/1.1\r\nHost: x\r\n\r\n`));
  });
  const text = new TextDecoder().decode(answer);
  assert.match(text, /^HTTP\/1\.1 503 /, JSON.stringify(text));
  assert.match(text, /agent:greedy holds 128 /);
  assert.match(other, /^HTTP\/1\.1 200 [^]*pong\n$/);
});

Deno.test("P-NET-1 P-NET-2 a SOCKS5 request past its principal's 128 proxy connections gets reply 1 (general failure), not a closed connection", async () => {
  const { answer, other } = await pastShare(128, async (conn, port) => {
    await conn.write(new Uint8Array([5, 1, 0]));
    await conn.read(new Uint8Array(2));
    await conn.write(new Uint8Array([5, 1, 0, 1, 127, 0, 0, 2, port >> 8, port & 255]));
  });
  assert.deepEqual([...answer.subarray(0, 2)], [5, 1]);
  assert.match(other, /^HTTP\/1\.1 200 [^]*pong\n$/);
});

Deno.test("P-NET-1 a principal within its share is served as before: its 128th connection goes through", async () => {
  const { answer } = await pastShare(127, async (conn, port) => {
    await conn.write(encoder.encode(`GET http://127.0.0.2:${port}/ HTTP/1.1\r\nHost: x\r\n\r\n`));
  });
  assert.match(new TextDecoder().decode(answer), /^HTTP\/1\.1 200 [^]*pong\n$/);
});

Deno.test({
  name:
    "P-NET-1 four principals each holding their 128 proxy connections leave a fifth principal served [ignored: needs a SPEC decision: P-NET-1 says nothing of how the proxy shares its connections; it holds 512 at once and 128 per principal, so four principals that each hold their share (idle CONNECTs, reopened as the 30 s handshake limit closes them) leave every other principal a 503 naming the proxy's limit: seen with NetProxy, 3 greedy principals left the fifth a 200, 4 left it a 503]",
  ignore: true,
  fn: async () => {
    await withTempDir(async (dir) => {
      const server = Deno.serve(
        { hostname: "127.0.0.2", port: 0, onListen: () => {} },
        () => new Response("pong\n"),
      );
      const port = server.addr.port;
      const proxy = new NetProxy(dir, () => {});
      const socket = (principal: string) =>
        `${
          proxy.endpoint(principal, sandboxNet(principal, [`127.0.0.2:${port}`])!).dir
        }/${PROXY_SOCKET}`;
      const conns: Deno.Conn[] = [];
      try {
        for (let p = 0; p < 4; p++) {
          const path = socket(`agent:greedy${p}`);
          for (let i = 0; i < 128; i++) {
            conns.push(await Deno.connect({ transport: "unix", path }));
          }
        }
        const theirs = await Deno.connect({ transport: "unix", path: socket("agent:other") });
        conns.push(theirs);
        await theirs.write(
          encoder.encode(`GET http://127.0.0.2:${port}/ HTTP/1.1\r\nHost: x\r\n\r\n`),
        );
        assert.match(new TextDecoder().decode(await readAll(theirs)), /^HTTP\/1\.1 200 /);
      } finally {
        for (const conn of conns) conn.close();
        proxy.closeAll();
        await server.shutdown();
      }
    });
  },
});
