import assert from "node:assert/strict";
import { NO_SANDBOX } from "../../../src/kernel/sandbox/probe.ts";
import { Kernel } from "../../../src/kernel/daemon/kernel.ts";
import { loadStartupPolicy } from "../../../src/kernel/policy/leash.ts";
import { acceptLoop } from "../../../src/kernel/daemon/accept_loop.ts";
import { RpcConnection } from "../../../src/protocol/rpc_client.ts";
import { collectEvents } from "../../_support/events.ts";
import { kernelTest, sharedKernel, startKernel } from "../../_support/kernel.ts";
import type { Rec } from "../../_support/rec.ts";
import { rpcError } from "../../_support/rejection.ts";
import { delay, waitUntil } from "../../_support/wait.ts";

function call(conn: RpcConnection, method: string, params: Rec): Promise<Rec> {
  return conn.request(method, params) as Promise<Rec>;
}

/** The cases that need no kernel of their own share one (channel names differ between them). */
const sharedCase = sharedKernel();

/** Learns the next task number by running a throwaway task (ids come from one counter). */
async function nextTaskNumber(conn: RpcConnection): Promise<number> {
  const { task } = await call(conn, "exec", { src: "true", async: true });
  await call(conn, "task.await", { task });
  return Number((task as string).slice(5)) + 1;
}

sharedCase(
  "K-EVT-3 a task.N subscription receives every state through completion with rising seq",
  async (conn, k) => {
    const events = collectEvents(conn);
    const n = await nextTaskNumber(conn);
    const sub = await call(conn, "events.subscribe", { channel: `task.${n}` });
    assert.deepEqual(sub, { channel: `task.${n}`, subscribed: true });
    const { task } = await call(conn, "exec", { src: "sleep 0.3; echo hi", async: true });
    assert.equal(task, `task:${n}`);
    const done = await call(conn, "task.await", { task });
    assert.ok(await waitUntil(() => events.length >= 2, 5000));
    await delay(100);
    assert.deepEqual(events.map((e) => e.channel), [`task.${n}`, `task.${n}`]);
    assert.deepEqual(events.map((e) => e.seq), [0, 1]);
    assert.ok((events[1].ts as number) >= (events[0].ts as number));
    assert.deepEqual(events[0].payload, { task, state: "running", result_ref: null });
    assert.deepEqual(events[1].payload, { task, state: "completed", result_ref: done.result_ref });

    // With `since`, what events.read returns is replayed first (K-EVT-3).
    const other = await k.attach();
    const replayed = collectEvents(other);
    await call(other, "events.subscribe", { channel: `task.${n}`, since: 0 });
    assert.ok(await waitUntil(() => replayed.length >= 1, 5000));
    await delay(100);
    assert.deepEqual(replayed.map((e) => e.seq), [1]);
  },
);

sharedCase(
  "K-EXEC-8 one run publishes journal, then session.transcript, then render, then the terminal task.N",
  async (_, k) => {
    const conn = await k.attach("ordered");
    const events = collectEvents(conn);
    const n = await nextTaskNumber(conn);
    for (const channel of ["journal", "session.transcript", "render", `task.${n}`]) {
      await call(conn, "events.subscribe", { channel });
    }
    const { task } = await call(conn, "exec", { src: "echo ordered", async: true });
    const done = await call(conn, "task.await", { task });
    const ref = done.result_ref as string;
    assert.ok(await waitUntil(() => events.length >= 5, 5000));
    await delay(100);
    assert.deepEqual(events.map((e) => e.channel), [
      `task.${n}`,
      "journal",
      "session.transcript",
      "render",
      `task.${n}`,
    ]);
    const ts = events.map((e) => e.ts as number);
    assert.deepEqual(ts, [...ts].sort((a, b) => a - b), "ts not in arrival order");
    const [, journal, transcript, render, finished] = events.map((e) => e.payload as Rec);
    assert.equal(journal.session, "ordered");
    assert.equal(journal.head, "echo");
    assert.equal(journal.ok, true);
    assert.equal(journal.principal, `uid:${Deno.uid()}`);
    assert.equal(typeof journal.entry_id, "number");
    assert.equal(transcript.ref, ref);
    assert.equal(transcript.n, Number(ref.slice(4)));
    assert.deepEqual(transcript.summary, {
      type: "outcome",
      ok: true,
      cmd: "echo ordered",
      out_type: "str",
    });
    assert.deepEqual(render, { ref, session: "ordered", render: "ordered" });
    assert.deepEqual(finished, { task, state: "completed", result_ref: ref });
  },
);

sharedCase(
  "K-EVT-4 events.unsubscribe stops pushes of that channel on this connection and is idempotent",
  async (sub, k) => {
    const pub = await k.attach();
    const events = collectEvents(sub);
    await call(sub, "events.subscribe", { channel: "user.x" });
    await call(sub, "events.subscribe", { channel: "user.x" }); // no second subscription
    await call(sub, "events.subscribe", { channel: "user.sentinel" });
    for (let i = 0; i < 3; i++) {
      await call(pub, "events.publish", { channel: "user.x", payload: i });
    }
    assert.ok(await waitUntil(() => events.length >= 3, 5000));
    const off = await call(sub, "events.unsubscribe", { channel: "user.x" });
    assert.deepEqual(off, { channel: "user.x", subscribed: false });
    assert.deepEqual(await call(sub, "events.unsubscribe", { channel: "user.x" }), off);
    assert.deepEqual(await call(sub, "events.unsubscribe", { channel: "user.never" }), {
      channel: "user.never",
      subscribed: false,
    });
    for (let i = 3; i < 6; i++) {
      await call(pub, "events.publish", { channel: "user.x", payload: i });
    }
    // Pushes on one connection are written in publish order: once the sentinel is in, any
    // user.x event published before it would be too.
    await call(pub, "events.publish", { channel: "user.sentinel", payload: "end" });
    assert.ok(await waitUntil(() => events.some((e) => e.channel === "user.sentinel"), 5000));
    assert.deepEqual(events.map((e) => [e.channel, e.payload]), [
      ["user.x", 0],
      ["user.x", 1],
      ["user.x", 2],
      ["user.sentinel", "end"],
    ]);
  },
);

Deno.test("K-EVT-4 closing a connection removes all its subscriptions (in-process kernel, real socket)", async () => {
  const dir = await Deno.makeTempDir({ prefix: "shoal-events-test-" });
  const kernel = await Kernel.start({
    stateDir: dir,
    socketPath: `${dir}/k.sock`,
    // No exec runs in this kernel: bash is never started.
    bash: "/bin/bash",
    bashVariables: new Set(),
    localHuman: `uid:${Deno.uid()}`,
    home: undefined,
    policy: loadStartupPolicy(null, {}),
    sandbox: {
      host: NO_SANDBOX,
      home: undefined,
      masked: [],
      gitIdentity: () => null,
      gitExcludes: () => null,
    },
    initialState: () => ({
      cwd: dir,
      env: new Map(),
      vars: new Map(),
      funcs: new Map(),
      aliases: new Map(),
    }),
  });
  const listener = Deno.listen({ transport: "unix", path: `${dir}/k.sock` });
  const serving = acceptLoop(kernel, listener);
  try {
    const conn = await RpcConnection.connect(`${dir}/k.sock`);
    await conn.request("session.attach", {});
    for (const channel of ["user.a", "user.b", "journal"]) {
      await conn.request("events.subscribe", { channel });
    }
    assert.equal(kernel.connections.size, 1);
    const [client] = kernel.connections;
    assert.deepEqual(kernel.bus.subscriptions(client.subscriber).sort(), [
      "journal",
      "user.a",
      "user.b",
    ]);
    conn.close();
    assert.ok(await waitUntil(() => kernel.connections.size === 0, 5000));
    assert.deepEqual(kernel.bus.subscriptions(client.subscriber), []);
  } finally {
    listener.close();
    await serving;
    await kernel.shutdown();
    await Deno.remove(dir, { recursive: true });
  }
});

sharedCase(
  "K-EVT-9/10 a subscriber that stops reading loses only its own events and then gets {dropped, latest_seq}",
  async (pub, k) => {
    const reader = await k.attach();
    const readerEvents = collectEvents(reader);
    await call(reader, "events.subscribe", { channel: "user.slow" });
    // The slow subscriber: a raw socket that subscribes, then does not read for a while.
    const raw = await Deno.connect({ transport: "unix", path: k.socket });
    const frames = [
      { jsonrpc: "2.0", id: 1, method: "session.attach", params: {} },
      { jsonrpc: "2.0", id: 2, method: "events.subscribe", params: { channel: "user.slow" } },
    ].map((m) => JSON.stringify(m) + "\n").join("");
    const bytes = new TextEncoder().encode(frames);
    for (let at = 0; at < bytes.length;) at += await raw.write(bytes.subarray(at));
    const lines = new LineReader(raw.readable.getReader());
    try {
      const replies = [JSON.parse(await lines.next()), JSON.parse(await lines.next())];
      assert.deepEqual(replies[1].result, { channel: "user.slow", subscribed: true });

      // 400 events of 32 KiB: the socket buffer fills after a few, then the queue's 256.
      const pad = "x".repeat(32 * 1024);
      const published = 400;
      for (let i = 0; i < published; i++) {
        await call(pub, "events.publish", { channel: "user.slow", payload: { i, pad } });
      }
      // The reading subscriber was not held up by the stalled one (K-EVT-9).
      assert.ok(await waitUntil(() => readerEvents.length === published, 20000));
      assert.deepEqual(readerEvents.map((e) => e.seq), [...Array(published).keys()]);

      const got: Rec[] = [];
      let synthetic: Rec | undefined;
      while (synthetic === undefined) {
        const event = JSON.parse(await lines.next());
        assert.equal(event.method, "event");
        if ((event.params.payload as Rec).dropped !== undefined) synthetic = event.params;
        else got.push(event.params);
      }
      await call(pub, "events.publish", { channel: "user.slow", payload: { i: published } });
      const after = JSON.parse(await lines.next()).params;

      const seqs = got.map((e) => e.seq as number);
      assert.deepEqual(seqs, [...seqs.keys()], "delivered events are not the oldest, in order");
      assert.ok(seqs.length >= 256, `only ${seqs.length} delivered`);
      const payload = synthetic.payload as Rec;
      assert.ok((payload.dropped as number) > 0);
      assert.equal(payload.latest_seq, published - 1);
      assert.equal(synthetic.seq, published - 1);
      assert.equal(synthetic.channel, "user.slow");
      assert.equal(seqs.length + (payload.dropped as number), published);
      assert.equal(after.seq, published);
      assert.deepEqual(after.payload, { i: published });
    } finally {
      // Cancelling the readable closes the socket.
      await lines.cancel();
    }
  },
);

/** Splits a byte stream into lines, reading only when asked (so the peer can be left unread). */
class LineReader {
  #buffer = new Uint8Array(0);
  #decoder = new TextDecoder();

  constructor(private readonly reader: ReadableStreamDefaultReader<Uint8Array>) {}

  /** The next line without its newline; fails after 20 s or at end of stream. */
  async next(): Promise<string> {
    const deadline = Date.now() + 20000;
    while (true) {
      const nl = this.#buffer.indexOf(10);
      if (nl >= 0) {
        const line = this.#decoder.decode(this.#buffer.subarray(0, nl));
        this.#buffer = this.#buffer.slice(nl + 1);
        return line;
      }
      let timer: ReturnType<typeof setTimeout> | undefined;
      const chunk = await Promise.race([
        this.reader.read(),
        new Promise<never>((_, reject) => {
          timer = setTimeout(() => reject(new Error("no line within 20 s")), deadline - Date.now());
        }),
      ]).finally(() => clearTimeout(timer));
      if (chunk.done) throw new Error("stream ended");
      const joined = new Uint8Array(this.#buffer.length + chunk.value.length);
      joined.set(this.#buffer);
      joined.set(chunk.value, this.#buffer.length);
      this.#buffer = joined;
    }
  }

  /** Stops reading (and closes the underlying connection). */
  async cancel(): Promise<void> {
    await this.reader.cancel().catch(() => {});
  }
}

kernelTest(
  "K-EVT-2/K-EVT-6 only user.* is publishable (-32602 with data.channel); payloads up to 64 KiB; 1024 user channels",
  async (k) => {
    const conn = await k.attach();
    for (
      const channel of ["journal", "task.1", "session.transcript", "render", "approval", "pty.1"]
    ) {
      const e = await rpcError(call(conn, "events.publish", { channel, payload: {} }));
      assert.equal(e.code, -32602, channel);
      assert.equal((e.data as Rec).channel, channel);
    }
    assert.deepEqual((await call(conn, "events.read", { channel: "task.1" })).events, []);

    // Compact JSON of a string of n characters is n + 2 bytes.
    const fits = await call(conn, "events.publish", {
      channel: "user.big",
      payload: "x".repeat(65534),
    });
    assert.deepEqual([fits.channel, fits.seq], ["user.big", 0]);
    assert.equal(typeof fits.ts, "number");
    const big = await rpcError(
      call(conn, "events.publish", { channel: "user.big", payload: "x".repeat(65535) }),
    );
    assert.equal(big.code, -32602);
    const missing = await rpcError(call(conn, "events.publish", { channel: "user.big" }));
    assert.equal(missing.code, -32602);
    assert.equal(
      (await call(conn, "events.publish", { channel: "user.big", payload: null })).seq,
      1,
    );

    // user.big is one of the 1024; 1023 more fit, the next distinct one does not.
    for (let i = 0; i < 1023; i++) {
      await call(conn, "events.publish", { channel: `user.c${i}`, payload: i });
    }
    const over = await rpcError(call(conn, "events.publish", { channel: "user.more", payload: 1 }));
    assert.equal(over.code, -32040);
    assert.deepEqual(over.data, { quota: "user_channels", limit: 1024 });
    assert.equal((await call(conn, "events.publish", { channel: "user.c0", payload: 2 })).seq, 1);
  },
);

sharedCase(
  "K-EVT-1 events.read: since is exclusive, limit keeps the newest tail, ring keeps 1024, names validated",
  async (conn) => {
    for (let i = 0; i < 10; i++) {
      const r = await call(conn, "events.publish", { channel: "user.r", payload: { i } });
      assert.equal(r.seq, i);
    }
    const read = async (params: Rec) =>
      ((await call(conn, "events.read", { channel: "user.r", ...params })).events as Rec[]).map(
        (e) => e.seq,
      );
    assert.deepEqual(await read({}), [0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    assert.deepEqual(await read({ since: -1 }), [0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    assert.deepEqual(await read({ since: 4 }), [5, 6, 7, 8, 9]);
    assert.deepEqual(await read({ limit: 3 }), [7, 8, 9]);
    assert.deepEqual(await read({ since: 2, limit: 3 }), [7, 8, 9]);
    assert.deepEqual(await read({ since: 6, limit: 10 }), [7, 8, 9]);
    assert.deepEqual(await read({ since: 9 }), []);
    assert.deepEqual(await read({ since: 100 }), []);
    const one = (await call(conn, "events.read", { channel: "user.r", since: 8 })).events as Rec[];
    assert.deepEqual(one, [{ channel: "user.r", seq: 9, ts: one[0].ts, payload: { i: 9 } }]);
    assert.deepEqual(await call(conn, "events.read", { channel: "user.none" }), {
      channel: "user.none",
      events: [],
    });

    for (let i = 0; i < 1100; i++) {
      await call(conn, "events.publish", { channel: "user.ring", payload: i });
    }
    const ring = (await call(conn, "events.read", { channel: "user.ring", limit: 10000 }))
      .events as Rec[];
    assert.equal(ring.length, 1024);
    assert.deepEqual([ring[0].seq, ring.at(-1)!.seq], [76, 1099]);

    const badParams: Rec[] = [
      { channel: "user.r", since: -2 },
      { channel: "user.r", limit: 0 },
      { channel: "user.r", limit: 10001 },
      { channel: "user.r", since: 1.5 },
    ];
    for (const params of badParams) {
      assert.equal(
        (await rpcError(call(conn, "events.read", params))).code,
        -32602,
        JSON.stringify(params),
      );
    }
    const longest = `user.${"n".repeat(123)}`;
    assert.equal(longest.length, 128);
    assert.equal((await call(conn, "events.publish", { channel: longest, payload: 1 })).seq, 0);
    const badNames = ["", "user.a b", "user/x", "user.é", `${longest}n`];
    for (const channel of badNames) {
      for (const method of ["events.read", "events.subscribe", "events.unsubscribe"]) {
        const e = await rpcError(call(conn, method, { channel }));
        assert.equal(e.code, -32602, `${method} ${JSON.stringify(channel)}`);
      }
      const e = await rpcError(call(conn, "events.publish", { channel, payload: 1 }));
      assert.equal(e.code, -32602, `events.publish ${JSON.stringify(channel)}`);
    }
  },
);

sharedCase(
  "K-EVT-3/E-2 at most 64 subscriptions per connection; resubscribing is free; another connection has its own",
  async (conn, k) => {
    for (let i = 0; i < 64; i++) await call(conn, "events.subscribe", { channel: `user.s${i}` });
    await call(conn, "events.subscribe", { channel: "user.s0" });
    const over = await rpcError(call(conn, "events.subscribe", { channel: "user.s64" }));
    assert.equal(over.code, -32040);
    assert.deepEqual(over.data, { quota: "subscriptions", limit: 64 });
    await call(conn, "events.unsubscribe", { channel: "user.s0" });
    await call(conn, "events.subscribe", { channel: "user.s64" });
    const other = await k.attach();
    await call(other, "events.subscribe", { channel: "user.s0" });
    const unattached = await k.connect();
    for (const method of ["events.read", "events.publish", "events.subscribe"]) {
      const e = await rpcError(call(unattached, method, { channel: "user.s0", payload: 1 }));
      assert.equal(e.code, -32000, method);
    }
  },
);

Deno.test({
  name:
    "K-EVT-1/W-RPC-5 every retained event of a user.* channel can be read: 1024 events of 60 KB answer a default events.read, or some since/limit pages through them [ignored: needs a SPEC decision: the default read is ~61 MiB, so -32603 response too large (W-RPC-5 says responses are bounded by construction), and since K-EVT-1 keeps the newest limit after since, a limit small enough to fit (≤ 270) never reaches the oldest ~750, which only a subscribe with since replays; a byte bound on the read that keeps the oldest after since with a has_more, or a smaller payload bound, each change K-EVT-1/K-EVT-2]",
  ignore: true,
  fn: async () => {
    const k = await startKernel();
    try {
      const conn = await k.attach();
      const pad = "x".repeat(60000);
      for (let i = 0; i < 1024; i += 64) {
        await Promise.all(
          Array.from(
            { length: 64 },
            (_, j) =>
              call(conn, "events.publish", { channel: "user.big", payload: { i: i + j, pad } }),
          ),
        );
      }
      const seen = new Set<number>();
      let since = -1;
      for (let round = 0; round < 1024 && seen.size < 1024; round++) {
        const r = await call(conn, "events.read", { channel: "user.big", since }).catch(() =>
          call(conn, "events.read", { channel: "user.big", since, limit: 200 })
        );
        const events = r.events as Rec[];
        if (events.length === 0) break;
        for (const e of events) seen.add(e.seq as number);
        since = events.at(-1)!.seq as number;
      }
      assert.equal(seen.size, 1024, `events reachable by events.read: ${seen.size}`);
    } finally {
      await k.cleanup();
    }
  },
});
