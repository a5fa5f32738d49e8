/**
 * Event pushes through facades (K-EVT-9/10, M-SUB-3): every published event reaches each MCP
 * client in order or is counted as dropped, and a client that stops reading stdout is not
 * buffered for without limit.
 */
import assert from "node:assert/strict";
import type { RpcConnection } from "../../src/protocol/rpc_client.ts";
import { startKernel } from "../_support/kernel.ts";
import { type Sandbox, sandbox } from "../_support/sandbox.ts";
import { waitUntil } from "../_support/wait.ts";
import { RawFacade, spawnFacade } from "../_support/facade.ts";

type Frame = Record<string, unknown>;
interface Update {
  seq: number;
  payload: { i?: number; dropped?: number; latest_seq?: number };
}

const CHANNEL = "user.push";
const URI = `shoal://events/${CHANNEL}`;

/** The updates of `uri` among `frames`, checking they are in strictly increasing `seq` order. */
function updates(frames: Frame[], uri = URI): Update[] {
  const out = frames
    .filter((f) => f.method === "notifications/resources/updated")
    .map((f) => f.params as Frame & Update);
  if (uri === URI) { for (const u of out) assert.equal((u as Frame).uri, URI); }
  const mine = out.filter((u) => (u as Frame).uri === uri);
  for (let i = 1; i < mine.length; i++) {
    assert.ok(mine[i].seq > mine[i - 1].seq, `seq ${mine[i].seq} after ${mine[i - 1].seq}`);
  }
  return mine;
}

/** Events accounted for: delivered plus counted as dropped. */
function accounted(list: Update[]): number {
  return list.reduce((n, u) => n + (u.payload.dropped ?? 1), 0);
}

async function withKernel(
  fn: (
    box: Sandbox,
    publish: (n: number, pad: string) => Promise<void>,
    publisher: RpcConnection,
  ) => Promise<void>,
) {
  const box = await sandbox();
  const k = await startKernel([], box);
  const publisher = await k.attach("default");
  try {
    await fn(box, async (n, pad) => {
      for (let i = 0; i < n; i++) {
        await publisher.request("events.publish", { channel: CHANNEL, payload: { i, pad } });
      }
    }, publisher);
  } finally {
    publisher.close();
    await k.cleanup(); // removes the sandbox too
  }
}

Deno.test("K-EVT-9/10, M-SUB-3: under load every MCP client gets each event in order or counted as dropped", async () => {
  await withKernel(async (box, publish) => {
    const facades = Array.from({ length: 4 }, () => new RawFacade(box));
    try {
      for (const facade of facades) {
        assert.deepEqual((await facade.request(1, "resources/subscribe", { uri: URI })).result, {});
      }
      const events = 1000;
      await publish(events, "");
      for (const facade of facades) {
        const frames = facade.queued as Frame[];
        assert.ok(await waitUntil(() => accounted(updates(frames)) >= events, 60000));
        const list = updates(frames);
        assert.equal(accounted(list), events);
        const delivered = list.filter((u) => u.payload.i !== undefined).map((u) => u.payload.i!);
        assert.deepEqual(delivered, [...delivered].sort((a, b) => a - b));
        assert.deepEqual(delivered, [...new Set(delivered)], "no event is delivered twice");
      }
    } finally {
      for (const facade of facades) {
        facade.kill();
        await facade.exit().catch(() => {});
      }
    }
  });
});

Deno.test("K-EVT-10: a client that stops reading stdout backs up to the kernel, which drops and counts, and then gets the rest in order", async () => {
  await withKernel(async (box, publish) => {
    const child = spawnFacade(box);
    const stdin = child.stdin.getWriter();
    const stdout = child.stdout.getReader();
    const frames: Frame[] = [];
    let pending = "";
    const decoder = new TextDecoder();
    /** Reads stdout until `done` holds for the frames so far. */
    async function readUntil(done: () => boolean): Promise<void> {
      while (!done()) {
        const { value, done: ended } = await stdout.read();
        if (ended) throw new Error("facade stdout closed");
        pending += decoder.decode(value, { stream: true });
        const lines = pending.split("\n");
        pending = lines.pop()!;
        for (const line of lines) frames.push(JSON.parse(line));
      }
    }
    try {
      const subscribe = {
        jsonrpc: "2.0",
        id: 1,
        method: "resources/subscribe",
        params: { uri: URI },
      };
      await stdin.write(new TextEncoder().encode(JSON.stringify(subscribe) + "\n"));
      await readUntil(() => frames.some((f) => f.id === 1));
      // Nobody reads stdout now: ~3 MB of events is far more than the pipe, the socket and the
      // kernel's 256-event queue hold. Publishing still completes (K-EVT-9).
      const events = 3000;
      await publish(events, "x".repeat(1000));
      await readUntil(() => accounted(updates(frames)) >= events);
      const list = updates(frames);
      assert.equal(accounted(list), events);
      const drops = list.filter((u) => u.payload.dropped !== undefined);
      assert.ok(drops.length > 0, "the kernel dropped and counted instead of the facade buffering");
      for (const d of drops) assert.equal(d.payload.latest_seq, d.seq);
      // The newest event is delivered, or counted by the last synthetic event.
      const last = list[list.length - 1];
      assert.ok(last.payload.i === events - 1 || last.payload.dropped !== undefined);
    } finally {
      await stdin.close().catch(() => {});
      await stdout.cancel().catch(() => {});
      try {
        child.kill("SIGKILL");
      } catch {
        // already exited
      }
      await child.status;
    }
  });
});

Deno.test("M-SUB-3, W-FRAME-8: with two subscriptions and requests in flight, stdout holds whole frames: each URI's updates complete, in order, with the published payloads, and every request answered", async () => {
  await withKernel(async (box, _publish, publisher) => {
    const facade = new RawFacade(box);
    const uris = ["a", "b"].map((name) => `${URI}.${name}`);
    const payload = (uri: string, i: number) => ({
      i,
      uri,
      text: `"${i}" \\ é✓𝄞\n\t${"x".repeat(i % 97)}`,
      nested: [{ n: i / 7 }, [null, true]],
    });
    const events = 600;
    const requests = 60;
    try {
      for (const uri of uris) {
        assert.deepEqual((await facade.request(uri, "resources/subscribe", { uri })).result, {});
      }
      // Events on both channels, and requests to the facade while they flow.
      const published = (async () => {
        for (let i = 0; i < events; i++) {
          for (const uri of uris) {
            const channel = uri.slice("shoal://events/".length);
            await publisher.request("events.publish", { channel, payload: payload(uri, i) });
          }
        }
      })();
      for (let id = 0; id < requests; id++) {
        await facade.send({ jsonrpc: "2.0", id, method: "resources/templates/list" });
      }
      await published;
      for (let id = 0; id < requests; id++) {
        const result = (await facade.response(id)).result as Frame;
        assert.ok(Array.isArray(result.resourceTemplates));
      }
      const frames = facade.queued as Frame[];
      for (const uri of uris) {
        assert.ok(await waitUntil(() => accounted(updates(frames, uri)) >= events, 60000));
        const list = updates(frames, uri);
        assert.equal(accounted(list), events);
        for (const u of list) {
          if (u.payload.dropped === undefined) {
            assert.deepEqual(u.payload, payload(uri, u.payload.i!));
          }
        }
      }
      assert.deepEqual(facade.junk, [], "every stdout line is one whole JSON frame");
    } finally {
      facade.kill();
      await facade.exit().catch(() => {});
    }
  });
});

Deno.test("M-SUB-3: events forwarded undecoded and events the facade re-encodes (index keys, lone surrogates) interleave in kernel order, payloads intact", async () => {
  await withKernel(async (box, _publish, publisher) => {
    const facade = new RawFacade(box);
    const payload = (i: number) =>
      [
        { i },
        { i, "0": "an index key, ordered first by JSON.parse" },
        { i, text: "lone \ud800 surrogate" },
        { i, big: 12345678901234567890, text: "é✓𝄞\n" },
      ][i % 4];
    const events = 200;
    try {
      assert.deepEqual((await facade.request(1, "resources/subscribe", { uri: URI })).result, {});
      for (let i = 0; i < events; i++) {
        await publisher.request("events.publish", { channel: CHANNEL, payload: payload(i) });
      }
      const frames = facade.queued as Frame[];
      assert.ok(await waitUntil(() => accounted(updates(frames)) >= events, 60000));
      const list = updates(frames);
      assert.equal(list.length, events, "no drops at this pace");
      list.forEach((u, i) => {
        assert.equal(u.seq, i);
        assert.deepEqual(u.payload, JSON.parse(JSON.stringify(payload(i))));
      });
      assert.deepEqual(facade.junk, []);
    } finally {
      facade.kill();
      await facade.exit().catch(() => {});
    }
  });
});

Deno.test("§9.2/W-NUM-1, M-SUB-3: a user.* payload holding integers past 2^53, 1e400 and -0 reaches the MCP client exactly as published (the facade's re-encoding rounded them)", async () => {
  await withKernel(async (box) => {
    const payload =
      '{"id":1152921504606846977,"huge":1e400,"neg":-0,"list":[-18446744073709551615]}';
    const child = spawnFacade(box);
    const stdin = child.stdin.getWriter();
    const stdout = child.stdout.getReader();
    const lines: string[] = [];
    let pending = "";
    const decoder = new TextDecoder();
    async function readUntil(done: () => boolean): Promise<void> {
      while (!done()) {
        const { value, done: ended } = await stdout.read();
        if (ended) throw new Error("facade stdout closed");
        pending += decoder.decode(value, { stream: true });
        const parts = pending.split("\n");
        pending = parts.pop()!;
        lines.push(...parts);
      }
    }
    const kernel = await Deno.connect({ transport: "unix", path: box.socket() });
    try {
      const subscribe = {
        jsonrpc: "2.0",
        id: 1,
        method: "resources/subscribe",
        params: { uri: URI },
      };
      await stdin.write(new TextEncoder().encode(JSON.stringify(subscribe) + "\n"));
      await readUntil(() => lines.some((l) => l.startsWith('{"jsonrpc":"2.0","id":1,')));
      // Published as raw text: a JS client's own JSON.stringify could not write these numbers.
      await kernel.write(new TextEncoder().encode(
        '{"jsonrpc":"2.0","id":1,"method":"session.attach","params":{}}\n' +
          `{"jsonrpc":"2.0","id":2,"method":"events.publish","params":{"channel":"${CHANNEL}","payload":${payload}}}\n`,
      ));
      await readUntil(() => lines.some((l) => l.includes("notifications/resources/updated")));
      const update = lines.find((l) => l.includes("notifications/resources/updated"))!;
      assert.ok(update.endsWith(`"seq":0,"payload":${payload}}}`), update);
    } finally {
      kernel.close();
      await stdin.close().catch(() => {});
      await stdout.cancel().catch(() => {});
      try {
        child.kill("SIGKILL");
      } catch {
        // already exited
      }
      await child.status;
    }
  });
});
