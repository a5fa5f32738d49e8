import assert from "node:assert/strict";
import { NESTING_LIMIT } from "../../../src/protocol/limits.ts";
import { RpcConnection } from "../../../src/protocol/rpc_client.ts";
import { collectLines, sharedKernel, spawnKernel, startKernel } from "../../_support/kernel.ts";
import { groupMembers } from "../../_support/proc.ts";
import type { Rec } from "../../_support/rec.ts";
import { rpcError } from "../../_support/rejection.ts";
import { sandbox } from "../../_support/sandbox.ts";
import { delay, waitUntil } from "../../_support/wait.ts";

/**
 * The cases about frames and envelopes on a connection share one kernel; those about the socket
 * file, its race and a stopping kernel start their own.
 */
const sharedCase = sharedKernel();

/** Sends raw bytes on a fresh socket connection and returns the reply lines that arrive. */
async function rawExchange(socket: string, bytes: Uint8Array, replies: number): Promise<unknown[]> {
  const conn = await Deno.connect({ transport: "unix", path: socket });
  const lines: string[] = [];
  const reading = collectLines(conn.readable, lines);
  let at = 0;
  while (at < bytes.length) at += await conn.write(bytes.subarray(at));
  await waitUntil(() => lines.length >= replies, 20000);
  conn.close();
  await reading.catch(() => {});
  return lines.map((l) => JSON.parse(l));
}

Deno.test("kernel socket is 0600 in a 0700 directory and attach reports the local human (G-SOCK-7, K-ATTACH-4)", async () => {
  const k = await startKernel();
  try {
    assert.equal((await Deno.lstat(k.socket)).mode! & 0o777, 0o600);
    assert.equal((await Deno.stat(k.socket.replace(/\/[^/]+$/, ""))).mode! & 0o777, 0o700);
    const conn = await k.connect();
    const r = await conn.request("session.attach", { session: "work" }) as Record<string, unknown>;
    assert.equal(r.session, "work");
    assert.equal(r.principal, `uid:${Deno.uid()}`);
    assert.equal(r.ast_version, 1);
    assert.equal(r.caps_enforced, false);
    assert.deepEqual(r.elide_defaults, {
      max_bytes: 8192,
      max_rows: 100,
      max_items: 500,
      max_bytes_raw: 4096,
      hard_cap: 65536,
    });
    assert.match(r.env_hash as string, /^sha256:[0-9a-f]{64}$/);
    assert.equal((r.caps as Record<string, unknown>).approver, true);
  } finally {
    await k.cleanup();
  }
});

sharedCase(
  "unattached calls fail with -32000 except parse; unknown methods are -32601 with data.method (G-TRUST-5)",
  async (_, k) => {
    const conn = await k.connect();
    for (const method of ["exec", "journal.query", "cap.request", "value.get", "task.list"]) {
      assert.equal((await rpcError(conn.request(method, {}))).code, -32000, method);
    }
    const parsed = await conn.request("parse", { src: "ls -l" }) as Record<string, unknown>;
    assert.equal((parsed.ast as Record<string, unknown>).type, "File");
    const missing = await rpcError(conn.request("no.such", {}));
    assert.equal(missing.code, -32601);
    assert.deepEqual(missing.data, { method: "no.such" });
  },
);

sharedCase(
  "bad frames get errors and the connection keeps serving: malformed, non-object, oversize (W-FRAME-4/6/7)",
  async (_, k) => {
    const enc = new TextEncoder();
    const replies = await rawExchange(
      k.socket,
      enc.encode(
        '{oops\n[1]\n{"jsonrpc":"2.0","id":1152921504606846977,"method":"parse","params":{"src":"true"}}\n',
      ),
      3,
    );
    const [malformed, batch, ok] = replies as Record<string, unknown>[];
    assert.equal((malformed.error as { code: number }).code, -32700);
    assert.equal(malformed.id, null);
    assert.equal((batch.error as { code: number }).code, -32600);
    assert.ok("result" in ok);

    const big = new Uint8Array(17 * 1024 * 1024).fill(0x61);
    const tail = enc.encode(
      '\n{"jsonrpc":"2.0","id":7,"method":"parse","params":{"src":"true"}}\n',
    );
    const both = new Uint8Array(big.length + tail.length);
    both.set(big);
    both.set(tail, big.length);
    const [oversize, after] = await rawExchange(k.socket, both, 2) as Record<string, unknown>[];
    assert.deepEqual(oversize, {
      jsonrpc: "2.0",
      id: null,
      error: { code: -32600, message: "frame exceeds 16 MiB" },
    });
    assert.equal(after.id, 7);
  },
);

sharedCase(
  "params nesting up to NESTING_LIMIT get an answer under their own id and deep event payloads are delivered; a deeper frame is -32600 under its id and the connection keeps serving (issue 13)",
  async (_, k) => {
    const conn = await Deno.connect({ transport: "unix", path: k.socket });
    const lines: string[] = [];
    const reading = collectLines(conn.readable, lines);
    const send = (text: string) => conn.write(new TextEncoder().encode(text + "\n"));
    const reply = (id: number) =>
      lines.map((l) => JSON.parse(l)).find((m) => m.id === id && !("method" in m));
    try {
      await send('{"jsonrpc":"2.0","id":1,"method":"session.attach","params":{"session":"deep"}}');
      await send(
        '{"jsonrpc":"2.0","id":2,"method":"events.subscribe","params":{"channel":"user.deep"}}',
      );
      await waitUntil(() => reply(1) !== undefined && reply(2) !== undefined, 20000);
      // Inside the frame's object and its params: exactly NESTING_LIMIT levels, then one more.
      const depth = NESTING_LIMIT - 2;
      const arrays = "[".repeat(depth) + "]".repeat(depth);
      const objects = '{"a":'.repeat(depth) + "1" + "}".repeat(depth);
      const frame = (id: string, method: string, params: string) =>
        `{"jsonrpc":"2.0","id":${id},"method":"${method}","params":${params}}`;
      await send(frame("3", "parse", `{"src":"true","x":${arrays}}`));
      await send(frame("4", "events.publish", `{"channel":"user.deep","payload":${arrays}}`));
      await send(frame("5", "events.publish", `{"channel":"user.deep","payload":${objects}}`));
      await send(frame("6", "events.publish", `{"channel":"user.deep","payload":[${arrays}]}`));
      await send(frame(arrays, "parse", '{"src":"true"}'));
      await send(frame("8", "events.read", '{"channel":"user.deep"}'));
      await send(frame("9", "parse", '{"src":"true"}'));
      await waitUntil(() => [3, 4, 5, 6, 8, 9].every((id) => reply(id) !== undefined), 20000);
      for (const id of [3, 4, 5, 8, 9]) {
        assert.ok("result" in reply(id), JSON.stringify(reply(id)).slice(0, 200));
      }
      assert.equal(reply(6).error.code, -32600, "one level deeper: refused under its own id");
      await waitUntil(
        () => lines.filter((l) => l.startsWith('{"jsonrpc":"2.0","method":"event"')).length === 2,
        20000,
      );
      const events = lines.map((l) => JSON.parse(l)).filter((m) => m.method === "event");
      assert.deepEqual(events.map((e) => JSON.stringify(e.params.payload)), [arrays, objects]);
      assert.equal(reply(8).result.events.length, 2);
      // A client reads the reply that wraps those payloads in its envelope.
      const client = await k.attach("deep");
      const read = await client.request("events.read", { channel: "user.deep" }) as Rec;
      assert.equal((read.events as Rec[]).length, 2);
      const idless = lines.map((l) => JSON.parse(l)).filter((m) => m.id === null);
      assert.deepEqual(
        idless.map((m) => m.error.code),
        [-32600],
        "only the too-deep id is refused",
      );
    } finally {
      conn.close();
      await reading.catch(() => {});
    }
  },
);

sharedCase("kernel ids are echoed verbatim beyond 2^53 (W-RPC-2)", async (_, k) => {
  const conn = await Deno.connect({ transport: "unix", path: k.socket });
  const lines: string[] = [];
  const reading = collectLines(conn.readable, lines);
  await conn.write(
    new TextEncoder().encode(
      '{"jsonrpc":"2.0","id":1152921504606846977,"method":"parse","params":{"src":"true"}}\n',
    ),
  );
  await waitUntil(() => lines.length >= 1, 20000);
  conn.close();
  await reading.catch(() => {});
  assert.match(lines[0], /"id":1152921504606846977[,}]/);
});

Deno.test("two kernels racing for one socket: exactly one serves, the other exits 3 (G-SOCK-4)", async () => {
  const box = await sandbox();
  try {
    const socket = box.socket();
    const a = spawnKernel(box, ["--socket", socket]);
    const b = spawnKernel(box, ["--socket", socket]);
    const aErr: string[] = [];
    const bErr: string[] = [];
    const reads = [collectLines(a.stderr, aErr), collectLines(b.stderr, bErr)];
    const first = await Promise.race([a.status.then(() => "a"), b.status.then(() => "b")]);
    const [loser, winner, loserErr] = first === "a" ? [a, b, aErr] : [b, a, bErr];
    assert.equal((await loser.status).code, 3);
    await reads[first === "a" ? 0 : 1];
    assert.ok(loserErr.some((l) => l.includes("another kernel owns")), loserErr.join("\n"));
    const conn = await waitForConnect(socket);
    assert.equal(
      (await conn.request("parse", { src: "true" }) as { ast_lang: string }).ast_lang,
      "bash",
    );
    conn.close();
    winner.kill("SIGTERM");
    assert.equal((await winner.status).code, 0);
    await Promise.all(reads);
    // G-SOCK-8: the socket is removed on clean shutdown.
    assert.equal(await Deno.lstat(socket).catch(() => null), null);
  } finally {
    await box.cleanup();
  }
});

async function waitForConnect(socket: string): Promise<RpcConnection> {
  for (let i = 0; i < 600; i++) {
    try {
      return await RpcConnection.connect(socket);
    } catch {
      await delay(50);
    }
  }
  throw new Error("kernel never listened");
}

Deno.test("a stale socket file is replaced; a regular file at the path is refused (G-SOCK-3)", async () => {
  const box = await sandbox();
  try {
    const socket = box.socket();
    await Deno.mkdir(socket.replace(/\/[^/]+$/, ""), { recursive: true, mode: 0o700 });
    // A socket file with no listener behind it, as a crashed kernel leaves.
    await new Deno.Command("python3", {
      args: ["-c", "import socket,sys; socket.socket(socket.AF_UNIX).bind(sys.argv[1])", socket],
    }).output();
    assert.ok((await Deno.lstat(socket)).isSocket);
    const k = await startKernel([], box);
    const conn = await k.attach();
    assert.equal(
      (await conn.request("session.cwd", {}) as { cwd: { display: string } }).cwd.display,
      box.dir,
    );
    assert.equal(await k.stop(), 0);

    await Deno.writeTextFile(socket, "not a socket");
    const refused = spawnKernel(box, ["--socket", socket]);
    const err: string[] = [];
    const reading = collectLines(refused.stderr, err);
    assert.equal((await refused.status).code, 1);
    await reading;
    assert.ok(err.some((l) => l.includes("refusing to replace non-socket path")), err.join("\n"));
    assert.equal(await Deno.readTextFile(socket), "not a socket");
  } finally {
    await box.cleanup();
  }
});

Deno.test("SIGTERM stops background tasks and PTYs, removes the socket and exits 0 (G-SOCK-8)", async () => {
  const k = await startKernel();
  try {
    const conn = await k.attach();
    const started = await conn.request("exec", {
      src: "trap '' TERM; sleep 60",
      async: true,
    }) as { task: string };
    let pid: number | null = null;
    for (let i = 0; i < 200 && pid === null; i++) {
      pid = (await conn.request("task.get", { task: started.task }) as { pid: number | null }).pid;
      if (pid === null) await delay(20);
    }
    assert.ok(pid !== null);
    const pty = await conn.request("pty.open", { cmd: "sleep", args: ["60"] }) as { pid: number };
    assert.ok(groupMembers(pid).length > 0);
    assert.equal(await k.stop(), 0);
    assert.deepEqual(groupMembers(pid), []);
    assert.deepEqual(groupMembers(pty.pid), []);
    assert.equal(await Deno.lstat(k.socket).catch(() => null), null);
  } finally {
    await k.cleanup();
  }
});

/** Replies of a raw exchange keyed by their id's JSON text, plus the raw lines. */
function byIdText(lines: unknown[]): Map<string, Record<string, unknown>> {
  return new Map(lines.map((l) => [JSON.stringify((l as Record<string, unknown>).id), l as never]));
}

sharedCase(
  "W-RPC-1 envelope rules on the kernel socket: bad jsonrpc echoes the id, method must be a string, params an object or null; notifications get no reply",
  async (_, k) => {
    const frames = [
      '{"jsonrpc":"1.0","id":5,"method":"parse","params":{"src":"x"}}',
      '{"id":6,"method":"parse","params":{"src":"x"}}',
      '{"jsonrpc":"2.0","id":7,"method":5}',
      '{"jsonrpc":"2.0","id":8}',
      '{"jsonrpc":"2.0","id":9,"method":"parse","params":[1]}',
      '{"jsonrpc":"2.0","id":10,"method":"parse","params":"src"}',
      '{"jsonrpc":"2.0","method":"parse","params":[1]}',
      '{"jsonrpc":"2.0","method":"no.such"}',
      '{"jsonrpc":"2.0","id":11,"method":"session.attach","params":null}',
      '{"jsonrpc":"2.0","id":12,"method":"session.reef"}',
    ];
    const lines = await rawExchange(
      k.socket,
      new TextEncoder().encode(frames.join("\n") + "\n"),
      8,
    );
    assert.equal(lines.length, 8, JSON.stringify(lines));
    const replies = byIdText(lines);
    const code = (id: number) => (replies.get(String(id))?.error as { code: number })?.code;
    assert.deepEqual([5, 6, 7, 8].map(code), [-32600, -32600, -32600, -32600]);
    assert.deepEqual([9, 10].map(code), [-32602, -32602]);
    assert.equal((replies.get("11")?.result as Record<string, unknown>).session, "default");
    assert.deepEqual(replies.get("12")?.result, { active_scope: null, bindings: [] });
  },
);

sharedCase(
  "W-RPC-2 object, array, float and escaped-string ids are echoed as the same JSON text, and the connection keeps serving",
  async (_, k) => {
    const ids = [
      '{"a":[1,{"b":1152921504606846977}],"__proto__":{}}',
      '[1,"x",null]',
      "1.50",
      '"\\u0041"',
      "true",
    ];
    const frames = ids.map((id) =>
      `{"jsonrpc":"2.0","id":${id},"method":"parse","params":{"src":"true"}}`
    );
    frames.push('{"jsonrpc":"2.0","id":99,"method":"no.such"}');
    const conn = await Deno.connect({ transport: "unix", path: k.socket });
    const lines: string[] = [];
    const reading = collectLines(conn.readable, lines);
    await conn.write(new TextEncoder().encode(frames.join("\n") + "\n"));
    await waitUntil(() => lines.length >= frames.length, 20000);
    conn.close();
    await reading.catch(() => {});
    assert.equal(lines.length, frames.length, lines.join("\n"));
    for (const id of ids) {
      assert.ok(
        lines.some((l) => l.startsWith(`{"jsonrpc":"2.0","id":${id},"result":`)),
        `id ${id} not echoed verbatim in ${lines.map((l) => l.slice(0, 80)).join("\n")}`,
      );
    }
    assert.ok(lines.some((l) => l.startsWith('{"jsonrpc":"2.0","id":99,"error":{"code":-32601')));
  },
);

sharedCase(
  "W-RPC-5 a response that would pass 16 MiB (a result or an error echoing a huge method name) is -32603 response too large; the connection keeps serving",
  async (_, k) => {
    const conn = await k.attach();
    // 270 events of ~62 KiB: reading them all would be a ~16.4 MiB response.
    const payload = "p".repeat(62 * 1024);
    for (let i = 0; i < 270; i++) {
      await conn.request("events.publish", { channel: "user.big", payload });
    }
    const big = await rpcError(conn.request("events.read", { channel: "user.big" }));
    assert.equal(big.code, -32603);
    assert.equal(big.message, "response too large");
    const some = await conn.request("events.read", { channel: "user.big", limit: 200 }) as {
      events: unknown[];
    };
    assert.equal(some.events.length, 200);

    // -32601 repeats the method name in message and data: 2 × 9 MiB would pass 16 MiB.
    const unknown = await rpcError(conn.request("m".repeat(9 * 1024 * 1024), {}));
    assert.equal(unknown.code, -32603);
    assert.equal(unknown.message, "response too large");
    const missing = await rpcError(conn.request("no.such", {}));
    assert.equal(missing.code, -32601);
  },
);

sharedCase(
  "ids nested deeper than 100 levels are -32600 with id null, and the connection keeps serving (issue 13)",
  async (_, k) => {
    const conn = await Deno.connect({ transport: "unix", path: k.socket });
    const lines: string[] = [];
    const reading = collectLines(conn.readable, lines);
    try {
      const depths = Array.from({ length: 60 }, (_, i) => 101 + 50 * i);
      for (const depth of depths) {
        const id = "[".repeat(depth) + "]".repeat(depth);
        await conn.write(
          new TextEncoder().encode(
            `{"jsonrpc":"2.0","id":${id},"method":"parse","params":{"src":"true"}}\n`,
          ),
        );
      }
      await conn.write(
        new TextEncoder().encode(
          '{"jsonrpc":"2.0","id":7,"method":"parse","params":{"src":"true"}}\n',
        ),
      );
      await waitUntil(() => lines.length >= depths.length + 1, 20000);
      const replies = lines.map((l) => JSON.parse(l));
      assert.ok("result" in replies.find((m) => m.id === 7), "the connection still serves");
      const refused = replies.filter((m) => m.id === null);
      assert.equal(refused.length, depths.length);
      assert.ok(refused.every((m) => m.error.code === -32600));
    } finally {
      conn.close();
      await reading.catch(() => {});
    }
  },
);
