/**
 * A client that keeps sending requests but never reads the facade's stdout, handed to the facade
 * non-blocking (as a client may): the facade queued every response for the client, without limit
 * (probe67: 20,000 `tools/list` unread held +234 MiB RSS). It must stop reading requests while its
 * unwritten answers pass a bound, as the kernel does for its sockets, and catch up once read.
 */
import assert from "node:assert/strict";
import { spawnLauncher } from "../_support/facade.ts";
import { memoryKiB } from "../_support/proc.ts";
import { sandbox } from "../_support/sandbox.ts";
import { NON_BLOCKING_STDOUT } from "../_support/stdio_client.ts";

const MiB = 1024;
/** Requests sent while nothing is read: unbounded, their answers held ~350 MiB. */
const REQUESTS = 30_000;
const encoder = new TextEncoder();

function frame(message: unknown): Uint8Array {
  return encoder.encode(JSON.stringify(message) + "\n");
}

/** Writes `bytes`; false when the facade took nothing more within `ms` (it stopped reading). */
async function writeWithin(
  writer: WritableStreamDefaultWriter<Uint8Array>,
  bytes: Uint8Array,
  ms: number,
): Promise<{ done: boolean; write: Promise<void> }> {
  const write = writer.write(bytes);
  let timer: ReturnType<typeof setTimeout> | undefined;
  const done = await Promise.race([
    write.then(() => true),
    new Promise<boolean>((resolve) => timer = setTimeout(() => resolve(false), ms)),
  ]);
  clearTimeout(timer);
  return { done, write };
}

Deno.test("W-FRAME-8/M-CLI-3 a client that sends 30,000 tools/list and never reads its non-blocking stdout does not grow the facade by the answers it has not read: the facade stops reading until they are written, then answers every request", async () => {
  const box = await sandbox();
  const child = spawnLauncher(box.env(), [], "null", NON_BLOCKING_STDOUT);
  try {
    const writer = child.stdin.getWriter();
    await writer.write(frame({
      jsonrpc: "2.0",
      id: 0,
      method: "initialize",
      params: {
        protocolVersion: "2025-11-25",
        capabilities: {},
        clientInfo: { name: "x", version: "0" },
      },
    }));
    const before = memoryKiB(child.pid).rss;
    let batch = "";
    let pending: Promise<void> = Promise.resolve();
    for (let i = 1; i <= REQUESTS; i++) {
      batch += JSON.stringify({ jsonrpc: "2.0", id: i, method: "tools/list" }) + "\n";
      if (batch.length < 1 << 16 && i < REQUESTS) continue;
      const sent = await writeWithin(writer, encoder.encode(batch), 5000);
      batch = "";
      pending = sent.write;
      if (!sent.done) break; // the facade stopped reading: what it holds is bounded now
    }
    // Whatever the facade took in is answered (or queued) within a moment.
    await new Promise((resolve) => setTimeout(resolve, 2000));
    const growth = memoryKiB(child.pid).rss - before;
    assert.ok(growth < 128 * MiB, `the facade grew by ${growth} KiB for answers nobody read`);

    // Reading again, every request written is answered, the last one included.
    const last = encoder.encode(
      JSON.stringify({ jsonrpc: "2.0", id: "last", method: "ping" }) + "\n",
    );
    const lastWrite = pending.then(() => writer.write(last));
    const decoder = new TextDecoder();
    let text = "";
    let lastSeen = false;
    for await (const chunk of child.stdout) {
      text += decoder.decode(chunk, { stream: true });
      const cut = text.lastIndexOf("\n");
      if (cut >= 0) {
        lastSeen ||= text.slice(0, cut).includes(`"id":"last"`);
        text = text.slice(cut + 1);
      }
      if (lastSeen) break;
    }
    await lastWrite;
    assert.ok(lastSeen, "the ping sent after the flood was answered");
  } finally {
    child.kill("SIGKILL");
    await child.status;
    await box.cleanup();
  }
});

/** initialize and 30 tools/list (~360 KiB of answers, more than a pipe holds), then stdin EOF. */
async function floodThenEof(child: Deno.ChildProcess): Promise<void> {
  const writer = child.stdin.getWriter();
  let text = JSON.stringify({
    jsonrpc: "2.0",
    id: 0,
    method: "initialize",
    params: {
      protocolVersion: "2025-11-25",
      capabilities: {},
      clientInfo: { name: "x", version: "0" },
    },
  }) + "\n";
  for (let i = 1; i <= 30; i++) {
    text += JSON.stringify({ jsonrpc: "2.0", id: i, method: "tools/list" }) + "\n";
  }
  await writer.write(encoder.encode(text));
  await writer.close();
}

/** The facade's exit status, or null when it still runs after `ms`. */
async function exitWithin(
  child: Deno.ChildProcess,
  ms: number,
): Promise<Deno.CommandStatus | null> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const status = await Promise.race([
    child.status,
    new Promise<null>((resolve) => timer = setTimeout(() => resolve(null), ms)),
  ]);
  clearTimeout(timer);
  return status;
}

Deno.test("M-CLI-3 a client that closes stdin and never reads its non-blocking stdout does not keep the facade: it exits 0 once its answers had their drain time, though unwritten", async () => {
  const box = await sandbox();
  const child = spawnLauncher(box.env(), [], "null", NON_BLOCKING_STDOUT);
  try {
    await floodThenEof(child);
    const status = await exitWithin(child, 30_000);
    assert.equal(status?.code, 0, "the facade still ran 30 s after stdin EOF");
  } finally {
    try {
      child.kill("SIGKILL");
    } catch {
      // it exited
    }
    await child.status;
    await box.cleanup();
  }
});

Deno.test({
  name:
    "M-CLI-3 a client that closes stdin and never reads its blocking stdout does not keep the facade [ignored: defect found by probe67; needs a decision: the facade writes a blocking stdout from its own thread (writeSync, issue 18), which holds the whole facade, its stdin EOF unseen, once the pipe is full; with 30 unread tools/list and stdin closed it still ran after 30 s, holding its kernel connections for as long as the client lives. Decide whether M-CLI-3's exit on stdin EOF must hold against such a client (then writes need a way out of a full pipe) or the rule is scoped to clients that read]",
  ignore: true,
  fn: async () => {
    const box = await sandbox();
    const child = spawnLauncher(box.env(), [], "null");
    try {
      await floodThenEof(child);
      const status = await exitWithin(child, 30_000);
      assert.equal(status?.code, 0, "the facade still ran 30 s after stdin EOF");
    } finally {
      try {
        child.kill("SIGKILL");
      } catch {
        // it exited
      }
      await child.status;
      await box.cleanup();
    }
  },
});
