import assert from "node:assert/strict";
import { ErrorCode, RpcError } from "../../../src/protocol/errors.ts";
import type { BusEvent } from "../../../src/kernel/events/bus_event.ts";
import { EventBus, type EventSubscriber } from "../../../src/kernel/events/bus.ts";
import { Journal } from "../../../src/kernel/journal/journal.ts";
import { waitUntil } from "../../_support/wait.ts";

/** A subscriber that records deliveries; after `stall()` each delivery waits for `allow`. */
class Recorder implements EventSubscriber {
  events: BusEvent[] = [];
  #budget = Infinity;
  #waiters: (() => void)[] = [];

  /** The owner its durable reads are narrowed to, if any ({@link EventSubscriber.storedOnly}). */
  storedOnly?: (channel: string) => string | undefined;

  constructor(readonly visible: (event: BusEvent) => boolean = () => true) {}

  stall(): void {
    this.#budget = 0;
  }

  allow(deliveries = Infinity): void {
    this.#budget += deliveries;
    for (const wake of this.#waiters.splice(0)) wake();
  }

  async deliver(event: BusEvent): Promise<void> {
    while (this.#budget <= 0) await new Promise<void>((wake) => this.#waiters.push(wake));
    this.#budget--;
    this.events.push(event);
  }
}

async function withBus(
  fn: (bus: EventBus, journal: Journal, dir: string) => void | Promise<void>,
): Promise<void> {
  const dir = await Deno.makeTempDir();
  const journal = Journal.open(dir);
  try {
    await fn(new EventBus(journal), journal, dir);
  } finally {
    journal.close();
    await Deno.remove(dir, { recursive: true });
  }
}

const seqs = (events: BusEvent[]) => events.map((e) => e.seq);
const range = (from: number, to: number) => Array.from({ length: to - from }, (_, i) => from + i);
const isCode = (code: number) => (err: unknown) => err instanceof RpcError && err.code === code;

Deno.test("K-EVT-5 seq starts at 0 per channel and ts is ns since the epoch", async () => {
  await withBus((bus) => {
    const before = BigInt(Date.now()) * 1_000_000n;
    const first = bus.publish("task.1", { state: "running" });
    assert.equal(bus.publish("task.1", {}).seq, 1);
    assert.equal(bus.publish("task.2", {}).seq, 0);
    assert.equal(first.seq, 0);
    assert.equal(first.channel, "task.1");
    assert.ok(first.ts >= before - 1_000_000n && first.ts < before + 60_000_000_000n);
  });
});

Deno.test("K-EVT-7 a ring-only channel keeps its newest 1024 events", async () => {
  await withBus((bus) => {
    for (let i = 0; i < 1500; i++) bus.publish("task.1", { i });
    const all = bus.read("task.1", -1, 10000);
    assert.deepEqual(seqs(all), range(476, 1500));
    assert.deepEqual(all[0].payload, { i: 476 });
  });
});

Deno.test("K-EVT-1 since is exclusive and limit keeps the newest tail in ascending order", async () => {
  await withBus((bus) => {
    for (let i = 0; i < 20; i++) bus.publish("render", { i });
    assert.deepEqual(seqs(bus.read("render", 10, 3)), [17, 18, 19]);
    assert.deepEqual(seqs(bus.read("render", 16)), [17, 18, 19]);
    assert.deepEqual(seqs(bus.read("render", 19)), []);
    assert.equal(bus.read("render").length, 20);
    assert.deepEqual(bus.read("user.nothing"), []);
  });
});

Deno.test("K-EVT-1 invalid channel names are -32602", async () => {
  await withBus((bus) => {
    for (const bad of ["", "a b", "x".repeat(129), "ü", "a/b"]) {
      assert.throws(() => bus.read(bad), isCode(ErrorCode.INVALID_PARAMS), bad);
      assert.throws(() => bus.subscribe(new Recorder(), bad), isCode(ErrorCode.INVALID_PARAMS));
    }
    assert.deepEqual(bus.read("A-z_0.9:x"), []);
    assert.deepEqual(bus.read("x".repeat(128)), []);
  });
});

Deno.test("K-EVT-7 durable channels read below the ring from the journal and survive restarts", async () => {
  const dir = await Deno.makeTempDir();
  try {
    let journal = Journal.open(dir);
    let bus = new EventBus(journal);
    for (let i = 0; i < 1500; i++) bus.publish("session.transcript", { n: i });
    assert.deepEqual(seqs(bus.read("session.transcript", -1, 10000)), range(0, 1500));
    assert.deepEqual(seqs(bus.read("session.transcript", 99, 3)), [1497, 1498, 1499]);
    assert.deepEqual(seqs(bus.read("session.transcript", 1, 2000)), range(2, 1500));
    journal.close();

    journal = Journal.open(dir);
    bus = new EventBus(journal);
    const history = bus.read("session.transcript", 1490);
    assert.deepEqual(seqs(history), range(1491, 1500));
    assert.deepEqual(history[0].payload, { n: 1491 });
    assert.equal(bus.publish("session.transcript", { n: 1500 }).seq, 1500);
    assert.deepEqual(seqs(bus.read("session.transcript", 1497)), [1498, 1499, 1500]);
    // Ring-only channels restart at 0.
    assert.equal(bus.publish("render", {}).seq, 0);
    journal.close();
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("J-6 a journal event stored by Journal.finish reaches the ring and subscribers", async () => {
  await withBus(async (bus, journal) => {
    const sub = new Recorder();
    bus.subscribe(sub, "journal");
    const id = journal.start({
      session: "work",
      principal: "uid:1000",
      ts_ns: 1767225600123456789n,
      cwd: new Uint8Array([47]),
      src: "ls",
      effects: [],
    });
    const event = journal.finish(id, { dur_ns: 1n, status: 0, ok: true, outputs: [] });
    bus.publishStored(event);
    assert.ok(await waitUntil(() => sub.events.length === 1, 10000), "journal event");
    assert.deepEqual(sub.events, [event]);
    assert.deepEqual(bus.read("journal"), [event]);
  });
});

Deno.test("K-EVT-8 a visibility predicate filters reads (ring and journal) before the limit", async () => {
  await withBus((bus) => {
    for (let i = 0; i < 2000; i++) {
      bus.publish("journal", { entry_id: i, principal: i % 10 === 0 ? "agent:a" : "agent:b" });
    }
    const mine = (e: BusEvent) => (e.payload as { principal: string }).principal === "agent:a";
    const visible = bus.read("journal", -1, 150, mine);
    assert.equal(visible.length, 150);
    assert.ok(visible.every(mine));
    assert.deepEqual(seqs(visible), range(50, 200).map((i) => i * 10));
    assert.deepEqual(seqs(bus.read("journal", 1975, 10, mine)), [1980, 1990]);
  });
});

Deno.test("K-EVT-3 subscribe without since pushes only later events, in order", async () => {
  await withBus(async (bus) => {
    bus.publish("task.3", { early: true });
    const sub = new Recorder();
    bus.subscribe(sub, "task.3");
    for (let i = 0; i < 10; i++) bus.publish("task.3", { i });
    assert.ok(await waitUntil(() => sub.events.length === 10, 10000), "10 events");
    assert.deepEqual(seqs(sub.events), range(1, 11));
  });
});

Deno.test("K-EVT-3 subscribe with since replays what read would return, then live events", async () => {
  await withBus(async (bus) => {
    for (let i = 0; i < 1500; i++) bus.publish("session.transcript", { n: i });
    const sub = new Recorder();
    bus.subscribe(sub, "session.transcript", 100);
    bus.publish("session.transcript", { n: 1500 });
    assert.ok(await waitUntil(() => sub.events.length === 1025, 10000), "replay and live event");
    assert.deepEqual(seqs(sub.events), range(476, 1501));
    // the live event itself, not a drop marker standing in for it under the same seq
    assert.deepEqual(sub.events[1024].payload, { n: 1500 });
  });
});

Deno.test("K-EVT-3/K-EVT-9 replayed history does not fill the live queue: 256 live events queue behind a 1024-event replay, the 257th is dropped and counted", async () => {
  await withBus(async (bus) => {
    for (let i = 0; i < 1024; i++) bus.publish("user.r", { i });
    const sub = new Recorder();
    sub.stall();
    bus.subscribe(sub, "user.r", -1);
    for (let i = 1024; i < 1024 + 257; i++) bus.publish("user.r", { i });
    sub.allow();
    assert.ok(
      await waitUntil(() => sub.events.length === 1024 + 257, 10000),
      "replay, live, marker",
    );
    // The 1024 replayed events and 256 live ones were queued; live event 1280 was dropped.
    assert.deepEqual(seqs(sub.events.slice(0, 1280)), range(0, 1280));
    assert.deepEqual(
      sub.events.slice(0, 1280).map((e) => (e.payload as { i: number }).i),
      range(0, 1280),
    );
    assert.deepEqual(sub.events[1280].payload, { dropped: 1, latest_seq: 1280 });
  });
});

Deno.test({
  name:
    "K-EVT-3/K-EVT-11 a subscriber catching up on a durable channel from a cursor more than 1024 events back learns of the stored events it is not replayed [ignored: needs a SPEC decision: K-EVT-3 replays what events.read would return, the newest 1024 after since, so since=100 over 1500 stored journal events replays 476..1499 and 101..475 are neither delivered nor counted by a {dropped} marker, while K-EVT-11 promises at-least-once and K-EVT-8 makes seq gaps look like filtering; replaying the oldest after since, paging the rest, or a marker before the tail each change K-EVT-3]",
  ignore: true,
  fn: async () => {
    await withBus(async (bus) => {
      for (let i = 0; i < 1500; i++) bus.publish("session.transcript", { n: i });
      const sub = new Recorder();
      bus.subscribe(sub, "session.transcript", 100);
      assert.ok(await waitUntil(() => sub.events.length >= 1024, 10000), "replay");
      const first = sub.events[0];
      const told = first.seq === 101 || (first.payload as { dropped?: number }).dropped === 375;
      assert.ok(told, `first event after cursor 100: seq ${first.seq}`);
    });
  },
});

Deno.test("K-EVT-3 subscribing twice to a channel does not duplicate deliveries", async () => {
  await withBus(async (bus) => {
    const sub = new Recorder();
    bus.subscribe(sub, "user.x");
    bus.subscribe(sub, "user.x");
    bus.subscribe(sub, "user.x", -1);
    bus.publish("user.x", 1);
    bus.publish("user.x", 2);
    assert.ok(await waitUntil(() => sub.events.length >= 2, 10000), "2 events");
    await new Promise((resolve) => setTimeout(resolve, 20));
    assert.deepEqual(seqs(sub.events), [0, 1]);
    assert.deepEqual(bus.subscriptions(sub), ["user.x"]);
  });
});

Deno.test("E-2 at most 64 subscriptions per subscriber", async () => {
  await withBus((bus) => {
    const sub = new Recorder();
    for (let i = 0; i < 64; i++) bus.subscribe(sub, `task.${i}`);
    assert.throws(
      () => bus.subscribe(sub, "task.64"),
      (err) =>
        err instanceof RpcError && err.code === ErrorCode.QUOTA_EXCEEDED &&
        JSON.stringify(err.data) === '{"quota":"subscriptions","limit":64}',
    );
    bus.subscribe(sub, "task.0");
    bus.subscribe(new Recorder(), "task.64");
    bus.unsubscribe(sub, "task.0");
    bus.subscribe(sub, "task.64");
    assert.equal(bus.subscriptions(sub).length, 64);
  });
});

Deno.test("K-EVT-4 unsubscribe and removeSubscriber stop pushes; unsubscribe is idempotent", async () => {
  await withBus(async (bus) => {
    const sub = new Recorder();
    bus.subscribe(sub, "user.a");
    bus.subscribe(sub, "user.b");
    bus.unsubscribe(sub, "user.a");
    bus.unsubscribe(sub, "user.a");
    bus.unsubscribe(sub, "user.never");
    bus.publish("user.a", "a");
    bus.publish("user.b", "b");
    assert.ok(await waitUntil(() => sub.events.length === 1, 10000), "user.b event");
    bus.removeSubscriber(sub);
    bus.publish("user.b", "later");
    await new Promise((resolve) => setTimeout(resolve, 20));
    assert.deepEqual(sub.events.map((e) => e.payload), ["b"]);
    assert.deepEqual(bus.subscriptions(sub), []);
  });
});

Deno.test("K-EVT-9/10 a stalled subscriber drops and counts, then gets one {dropped, latest_seq}", async () => {
  await withBus(async (bus) => {
    const slow = new Recorder();
    const fast = new Recorder();
    slow.stall();
    bus.subscribe(slow, "task.9");
    bus.subscribe(fast, "task.9");
    // Publishing completes while the slow subscriber delivers nothing; the fast one keeps up.
    for (let batch = 0; batch < 3; batch++) {
      for (let i = 0; i < 100; i++) bus.publish("task.9", { i });
      assert.ok(
        await waitUntil(() => fast.events.length === (batch + 1) * 100, 10000),
        "fast subscriber",
      );
    }
    assert.deepEqual(seqs(fast.events), range(0, 300));
    assert.equal(slow.events.length, 0);
    slow.allow();
    // Event 0 was in flight, 1..256 filled the queue, 257..299 were dropped.
    assert.ok(await waitUntil(() => slow.events.length === 258, 10000), "slow subscriber to drain");
    assert.deepEqual(seqs(slow.events.slice(0, 257)), range(0, 257));
    const marker = slow.events[257];
    assert.equal(marker.channel, "task.9");
    assert.equal(marker.seq, 299);
    assert.equal(typeof marker.ts, "bigint");
    assert.deepEqual(marker.payload, { dropped: 43, latest_seq: 299 });
    bus.publish("task.9", { i: 300 });
    assert.ok(await waitUntil(() => slow.events.length === 259, 10000), "next live event");
    assert.equal(slow.events[258].seq, 300);
    assert.equal(slow.events.filter((e) => "dropped" in (e.payload as object)).length, 1);
  });
});

Deno.test("K-EVT-10 the drop marker precedes the next event when the queue refills", async () => {
  await withBus(async (bus) => {
    const slow = new Recorder();
    slow.stall();
    bus.subscribe(slow, "task.5");
    for (let i = 0; i < 260; i++) bus.publish("task.5", {});
    // One delivery completes, freeing one slot; the next publish queues marker + event.
    slow.allow(1);
    assert.ok(await waitUntil(() => slow.events.length === 1, 10000), "first delivery");
    bus.publish("task.5", {});
    slow.allow();
    assert.ok(await waitUntil(() => slow.events.length === 258, 10000), "drain");
    assert.deepEqual(seqs(slow.events.slice(254)), [254, 255, 259, 260]);
    assert.deepEqual(slow.events[256].payload, { dropped: 4, latest_seq: 259 });
  });
});

Deno.test("K-EVT-8 a subscriber's visibility predicate filters its pushes and replay", async () => {
  await withBus(async (bus) => {
    const own = (e: BusEvent) => (e.payload as { principal: string }).principal === "agent:a";
    bus.publish("journal", { principal: "agent:a" });
    bus.publish("journal", { principal: "agent:b" });
    const sub = new Recorder(own);
    bus.subscribe(sub, "journal", -1);
    bus.publish("journal", { principal: "agent:b" });
    bus.publish("journal", { principal: "agent:a" });
    assert.ok(await waitUntil(() => sub.events.length === 2, 10000), "own events");
    await new Promise((resolve) => setTimeout(resolve, 20));
    assert.deepEqual(seqs(sub.events), [0, 3]);
  });
});

Deno.test("a subscriber whose deliver fails loses its subscriptions", async () => {
  await withBus(async (bus) => {
    let calls = 0;
    const broken: EventSubscriber = {
      deliver: () => {
        calls++;
        return Promise.reject(new Error("connection closed"));
      },
      visible: () => true,
    };
    bus.subscribe(broken, "user.a");
    bus.subscribe(broken, "user.b");
    bus.publish("user.a", 1);
    assert.ok(await waitUntil(() => bus.subscriptions(broken).length === 0, 10000), "removal");
    bus.publish("user.b", 2);
    await new Promise((resolve) => setTimeout(resolve, 20));
    assert.equal(calls, 1);
  });
});

Deno.test("K-EVT-2 clients publish only on user.* channels", async () => {
  await withBus((bus) => {
    for (const channel of ["journal", "task.1", "render", "users.x", "user"]) {
      assert.throws(
        () => bus.publishFromClient(channel, {}),
        (err) =>
          err instanceof RpcError && err.code === ErrorCode.INVALID_PARAMS &&
          (err.data as { channel: string }).channel === channel,
        channel,
      );
    }
    const event = bus.publishFromClient("user.build", { phase: "test" });
    assert.equal(event.seq, 0);
    assert.deepEqual(bus.read("user.build"), [event]);
  });
});

Deno.test("K-EVT-2 payloads are limited to 64 KiB of compact JSON", async () => {
  await withBus((bus) => {
    // A JSON string is its text plus two quotes; "é" is two bytes of UTF-8.
    bus.publishFromClient("user.big", "x".repeat(65534));
    bus.publishFromClient("user.big", { big: 12345678901234567890n, s: "é".repeat(100) });
    assert.throws(
      () => bus.publishFromClient("user.big", "x".repeat(65535)),
      isCode(ErrorCode.INVALID_PARAMS),
    );
    // Bytes count, not UTF-16 units: 32768 "é" are 65538 bytes.
    bus.publishFromClient("user.big", "é".repeat(32767));
    assert.throws(
      () => bus.publishFromClient("user.big", "é".repeat(32768)),
      isCode(ErrorCode.INVALID_PARAMS),
    );
    assert.throws(() => bus.publishFromClient("user.big", undefined), isCode(-32602));
    assert.equal(bus.read("user.big").length, 3);
  });
});

Deno.test("E-2 at most 1024 distinct user.* channels per kernel", async () => {
  await withBus((bus) => {
    for (let i = 0; i < 1024; i++) bus.publishFromClient(`user.c${i}`, i);
    assert.throws(
      () => bus.publishFromClient("user.c1024", 0),
      (err) =>
        err instanceof RpcError && err.code === ErrorCode.QUOTA_EXCEEDED &&
        JSON.stringify(err.data) === '{"quota":"user_channels","limit":1024}',
    );
    assert.equal(bus.publishFromClient("user.c7", 1).seq, 1);
    assert.equal(bus.publish("task.1", {}).seq, 0);
  });
});

Deno.test("K-EVT-8 a read of a durable channel narrowed to one owner finds that owner's stored events without going through the others': an agent's read of the journal after 20,000 of the human's events judges only its own (1,000,000 of them kept a kernel from answering anyone for 38-55 s)", async () => {
  await withBus((bus, journal) => {
    const row = (principal: string, session: string) => ({ principal, session, head: "echo" });
    journal.appendEvent("journal", row("agent:a", "work"));
    journal.appendEvent("session.transcript", row("agent:a", "work"));
    for (let i = 0; i < 20_000; i++) {
      journal.appendEvent("journal", row("uid:0", "home"));
      journal.appendEvent("session.transcript", row("uid:0", "home"));
    }
    journal.appendEvent("journal", row("agent:a", "work"));
    let judged = 0;
    const own = (owner: string, member: "principal" | "session") => (e: BusEvent) => {
      judged++;
      return (e.payload as Record<string, unknown>)[member] === owner;
    };
    assert.deepEqual(seqs(bus.read("journal", -1, 1, own("agent:a", "principal"), "agent:a")), [
      20_001,
    ]);
    assert.deepEqual(seqs(bus.read("journal", -1, 5, own("agent:a", "principal"), "agent:a")), [
      0,
      20_001,
    ]);
    assert.deepEqual(
      seqs(bus.read("session.transcript", -1, 5, own("work", "session"), "work")),
      [0],
    );
    assert.ok(judged <= 4, `${judged} events judged`);

    const recorder = new Recorder(own("work", "session"));
    recorder.storedOnly = () => "work";
    judged = 0;
    bus.subscribe(recorder, "session.transcript", -1);
    assert.ok(judged <= 2, `${judged} events judged for the replay`);
    // Unnarrowed (a journal_read caller), the newest event of anyone.
    assert.deepEqual(seqs(bus.read("journal", -1, 1)), [20_001]);
  });
});
