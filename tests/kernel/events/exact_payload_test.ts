/**
 * §9.2 `user.*` payloads are "exactly the published payload" and W-NUM-1 integers are written
 * exactly: numbers a JSON.parse would round or overflow come back as they were published, in
 * `events.read` and in `event` pushes. Raw frames over the real socket of a real kernel.
 */
import assert from "node:assert/strict";
import { kernelTest } from "../../_support/kernel.ts";

/** A payload whose numbers a double cannot hold: past 2^53, past the double range, and -0. */
const PAYLOAD =
  '{"id":1152921504606846977,"big":12345678901234567890123,"huge":1e400,"neg":-0,"list":[9007199254740993,-18446744073709551615],"plain":1.5}';

/** Reads newline-delimited frames from `conn` until `done` holds for the lines so far. */
async function linesUntil(
  conn: Deno.Conn,
  lines: string[],
  done: () => boolean,
): Promise<void> {
  const decoder = new TextDecoder();
  const buf = new Uint8Array(1 << 16);
  let pending = "";
  while (!done()) {
    const n = await conn.read(buf);
    if (n === null) throw new Error("kernel closed the connection");
    pending += decoder.decode(buf.subarray(0, n), { stream: true });
    const parts = pending.split("\n");
    pending = parts.pop()!;
    lines.push(...parts);
  }
}

kernelTest(
  "§9.2/W-NUM-1 a user.* payload holding integers past 2^53, 1e400 and -0 is read and pushed exactly as published (it came back as 1.2345678901234568e+22, null and 0)",
  async (k) => {
    const conn = await Deno.connect({ transport: "unix", path: k.socket });
    try {
      const send = (frames: string[]) =>
        conn.write(new TextEncoder().encode(frames.map((f) => f + "\n").join("")));
      const lines: string[] = [];
      await send([
        '{"jsonrpc":"2.0","id":1,"method":"session.attach","params":{}}',
        '{"jsonrpc":"2.0","id":2,"method":"events.subscribe","params":{"channel":"user.exact"}}',
      ]);
      await linesUntil(
        conn,
        lines,
        () => lines.some((l) => l.startsWith('{"jsonrpc":"2.0","id":2,')),
      );
      await send([
        `{"jsonrpc":"2.0","id":3,"method":"events.publish","params":{"channel":"user.exact","payload":${PAYLOAD}}}`,
      ]);
      await linesUntil(conn, lines, () => lines.some((l) => l.includes('"method":"event"')));
      await send([
        '{"jsonrpc":"2.0","id":4,"method":"events.read","params":{"channel":"user.exact"}}',
      ]);
      await linesUntil(
        conn,
        lines,
        () => lines.some((l) => l.startsWith('{"jsonrpc":"2.0","id":4,')),
      );
      const pushed = lines.find((l) => l.includes('"method":"event"'))!;
      const read = lines.find((l) => l.startsWith('{"jsonrpc":"2.0","id":4,'))!;
      assert.ok(pushed.endsWith(`,"payload":${PAYLOAD}}}`), pushed);
      assert.ok(read.endsWith(`,"payload":${PAYLOAD}}]}}`), read);
      // A payload's size is judged on what is kept: the exact text.
      const over = `[${"1".repeat(65536 - 2)}0]`;
      await send([
        `{"jsonrpc":"2.0","id":5,"method":"events.publish","params":{"channel":"user.exact","payload":${over}}}`,
      ]);
      await linesUntil(
        conn,
        lines,
        () => lines.some((l) => l.startsWith('{"jsonrpc":"2.0","id":5,')),
      );
      const refused = JSON.parse(lines.find((l) => l.startsWith('{"jsonrpc":"2.0","id":5,'))!);
      assert.equal(refused.error?.code, -32602);
    } finally {
      conn.close();
    }
  },
);
