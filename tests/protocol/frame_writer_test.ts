import assert from "node:assert/strict";
import { FrameWriter } from "../../src/protocol/frame_writer.ts";

/**
 * A sink into `out` whose writeNow takes at most `takes()` bytes (which may throw) and whose write
 * takes one byte a millisecond later.
 */
function partialSink(out: number[], takes: () => number) {
  return {
    writeNow(p: Uint8Array): number {
      const n = Math.min(takes(), p.length);
      out.push(...p.subarray(0, n));
      return n;
    },
    async write(p: Uint8Array): Promise<number> {
      await new Promise((r) => setTimeout(r, 1));
      out.push(p[0]);
      return 1;
    },
  };
}

Deno.test("concurrent frames are written whole even when the sink takes a few bytes at a time (W-FRAME-8)", async () => {
  const out: number[] = [];
  // A sink that accepts at most 3 bytes per call and yields between calls.
  const sink = {
    async write(p: Uint8Array) {
      await new Promise((r) => setTimeout(r, 0));
      const n = Math.min(3, p.length);
      out.push(...p.subarray(0, n));
      return n;
    },
  };
  const writer = new FrameWriter(sink);
  const frames = Array.from({ length: 20 }, (_, i) => `{"frame":${i},"pad":"${"x".repeat(i)}"}\n`);
  await Promise.all(frames.map((f) => writer.write(new TextEncoder().encode(f))));
  assert.equal(new TextDecoder().decode(new Uint8Array(out)), frames.join(""));
});

Deno.test("after a failed write, later frames fail instead of writing a partial stream", async () => {
  let calls = 0;
  const writer = new FrameWriter({
    write() {
      calls++;
      return Promise.reject(new Error("gone"));
    },
  });
  await assert.rejects(writer.write(new Uint8Array([1])), /gone/);
  await assert.rejects(writer.write(new Uint8Array([2])), /gone/);
  assert.equal(calls, 1);
});

Deno.test("frames queued in one turn leave in one write, in order; a frame over 64 KiB goes alone", async () => {
  const writes: string[] = [];
  const writer = new FrameWriter({
    write(p: Uint8Array) {
      writes.push(new TextDecoder().decode(p));
      return Promise.resolve(p.length);
    },
  });
  const frame = (s: string) => new TextEncoder().encode(s + "\n");
  const big = "x".repeat(70 * 1024);
  await Promise.all([writer.write(frame("a")), writer.write(frame("b")), writer.write(frame("c"))]);
  await Promise.all([writer.write(frame("d")), writer.write(frame(big)), writer.write(frame("e"))]);
  assert.deepEqual(writes, ["a\nb\nc\n", "d\n", big + "\n", "e\n"]);
});

Deno.test("a writer that takes part of a batch at once (writeNow) gets the rest by write, whole and in order; a writeNow failure fails later frames", async () => {
  const out: number[] = [];
  let now = 5;
  const writer = new FrameWriter(partialSink(out, () => {
    if (now < 0) throw new Error("gone");
    return now;
  }));
  const frames = [new Uint8Array([1, 2, 3]), new Uint8Array([4, 5, 6, 7]), new Uint8Array([8])];
  await Promise.all(frames.map((f) => writer.write(f)));
  assert.deepEqual(out, [1, 2, 3, 4, 5, 6, 7, 8]);
  now = 100;
  await writer.write(new Uint8Array([9, 10]));
  assert.deepEqual(out.slice(8), [9, 10]);
  now = -1;
  await assert.rejects(writer.write(new Uint8Array([11])));
  now = 100;
  await assert.rejects(writer.write(new Uint8Array([12])));
  assert.equal(out.length, 10);
});

Deno.test("a writeNow writer gets a frame within the call while nothing is queued, and frames behind a partial write wait for it: all whole, in order", async () => {
  const out: number[] = [];
  /** How many bytes a writeNow call takes. */
  let cap = Infinity;
  const writer = new FrameWriter(partialSink(out, () => cap));
  const frame = (i: number) => Uint8Array.from({ length: 1 + (i % 4) }, () => i);
  assert.equal(writer.put(frame(1)), undefined, "idle, taken whole: written within the call");
  assert.deepEqual(out, [1, 1]);
  assert.equal(writer.put(frame(2)), undefined);
  cap = 2;
  const waits = [writer.put(frame(3))];
  cap = Infinity;
  for (let i = 4; i <= 12; i++) waits.push(writer.put(frame(i)));
  assert.ok(waits.every((w) => w instanceof Promise), "behind a partial write, frames wait");
  cap = 3;
  await Promise.all(waits);
  await writer.flushed();
  cap = Infinity;
  assert.equal(writer.put(frame(13)), undefined, "idle again: written within the call");
  const expected = Array.from({ length: 13 }, (_, k) => [...frame(k + 1)]).flat();
  assert.deepEqual(out, expected);
});

Deno.test("startAtOnce: a frame written while nothing is queued reaches the writer within the call; frames after it wait for it and leave together, in order", async () => {
  const writes: string[] = [];
  let release = () => {};
  const writer = new FrameWriter({
    async write(p: Uint8Array) {
      writes.push(new TextDecoder().decode(p));
      await new Promise<void>((resolve) => release = resolve);
      return p.length;
    },
  }, true);
  const frame = (s: string) => new TextEncoder().encode(s + "\n");
  const first = writer.write(frame("a"));
  assert.deepEqual(writes, ["a\n"], "started within the call");
  const later = [writer.write(frame("b")), writer.write(frame("c"))];
  await new Promise((r) => setTimeout(r, 0));
  assert.deepEqual(writes, ["a\n"], "later frames wait for the write in flight");
  release();
  await first;
  await new Promise((r) => setTimeout(r, 0));
  release();
  await Promise.all(later);
  assert.deepEqual(writes, ["a\n", "b\nc\n"]);
  const next = writer.write(frame("d"));
  assert.deepEqual(writes.at(-1), "d\n", "idle again: started within the call");
  release();
  await next;
});
