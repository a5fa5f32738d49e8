// Benchmark: PTY read round trip (input → rendered screen) and 50 MB output throughput through
// the emulator, with read latency measured while the flood flows, and a stage breakdown of the
// flood: reading the master alone (in steps that wait for 32 KiB, as the reader did before, against
// steps bounded in time), the emulator alone (xterm's async write, as the reader fed it before,
// against feedTerminal), and the whole path.
// Run: deno run -A scripts/bench/pty.ts
import xterm from "@xterm/headless";
import { feedTerminal } from "../../src/kernel/pty/feed.ts";
import { encodePtyInput } from "../../src/kernel/pty/keys.ts";
import { closeFd, EAGAIN, openPty, readFd, waitReadable } from "../../src/kernel/pty/libc.ts";
import { Pty, STEP_MS } from "../../src/kernel/pty/pty.ts";
import { setImmediate } from "node:timers";

const ROUND_TRIPS = 200;
const FLOOD_BYTES = 50_000_000;
const FLOOD_READ_GAP_MS = 20;
/** Bytes of `y\r\n` parsed by the emulator-only stage. */
const EMULATOR_BYTES = 20_000_000;
/** Chunk size the old reader handed to the emulator. */
const OLD_CHUNK = 64 * 1024;

function percentiles(samples: number[]): string {
  const sorted = [...samples].sort((a, b) => a - b);
  const pct = (p: number) => sorted[Math.max(0, Math.ceil(p * sorted.length) - 1)].toFixed(2);
  return `p50 ${pct(0.5)} ms, p95 ${pct(0.95)} ms, max ${pct(1)} ms (n=${sorted.length})`;
}

function mbps(bytes: number, ms: number): number {
  return bytes / 1e6 / (ms / 1000);
}

function yesChunk(size: number): Uint8Array {
  const pattern = new TextEncoder().encode("y\r\n");
  return Uint8Array.from({ length: size }, (_, i) => pattern[i % 3]);
}

function terminal(): InstanceType<typeof xterm.Terminal> {
  return new xterm.Terminal({
    cols: 80,
    rows: 24,
    scrollback: 0,
    allowProposedApi: true,
    logLevel: "off",
  });
}

/** Stage: the emulator alone, fed through xterm's async write in 64 KiB chunks (the old reader). */
async function emulatorOld(): Promise<number> {
  const term = terminal();
  const chunk = yesChunk(OLD_CHUNK);
  const start = performance.now();
  for (let n = 0; n < EMULATOR_BYTES; n += chunk.length) {
    await new Promise<void>((r) => term.write(chunk, r));
  }
  const ms = performance.now() - start;
  term.dispose();
  return mbps(EMULATOR_BYTES, ms);
}

/** Stage: the emulator alone, fed synchronously by feedTerminal in 32 KiB chunks (the new reader). */
function emulatorNew(): number {
  const term = terminal();
  const chunk = yesChunk(32 * 1024);
  const start = performance.now();
  for (let n = 0; n < EMULATOR_BYTES; n += chunk.length) feedTerminal(term, chunk);
  const ms = performance.now() - start;
  term.dispose();
  return mbps(EMULATOR_BYTES, ms);
}

/** What reading the master alone measured: throughput, calls, and how long each step of reads took. */
interface MasterFigures {
  mbps: number;
  reads: number;
  bytes: number;
  steps: number[];
}

/**
 * Stage: reading the master alone (bytes discarded) while `yes | head` floods the slave, in steps
 * like the PTY reader's: until 32 KiB are read, the master is empty, or (when `stepMs` is given)
 * that many ms have passed. A `pty.read` during a flood waits for one such step.
 */
async function masterOnly(dir: string, stepMs: number | null): Promise<MasterFigures> {
  const pair = openPty();
  const child = new Deno.Command("/bin/sh", {
    args: ["-c", `yes | head -c ${FLOOD_BYTES} >"$0"`, pair.slavePath],
    cwd: dir,
    stdout: "null",
    stderr: "null",
  }).spawn();
  const buf = new Uint8Array(32 * 1024);
  const steps: number[] = [];
  let total = 0;
  let reads = 0;
  const start = performance.now();
  let exited = false;
  child.status.then(() => exited = true);
  while (true) {
    const stepStart = performance.now();
    let filled = 0;
    let n = 0;
    while (
      filled < buf.length &&
      (filled === 0 || stepMs === null || performance.now() < stepStart + stepMs)
    ) {
      n = readFd(pair.master, buf.subarray(filled));
      reads++;
      if (n <= 0) break;
      filled += n;
    }
    total += filled;
    if (filled > 0) steps.push(performance.now() - stepStart);
    if (n === -EAGAIN) {
      if (exited) break;
      await waitReadable(pair.master, 50);
    } else if (n <= 0) break;
    else await new Promise((r) => setImmediate(r));
  }
  const ms = performance.now() - start;
  await child.status;
  closeFd(pair.slave);
  closeFd(pair.master);
  return { mbps: mbps(total, ms), reads, bytes: total, steps };
}

const dir = await Deno.makeTempDir({ prefix: "shoal_bench_pty_" });
const env = { PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin", HOME: dir };
try {
  // Round trip: send a line to `cat` and poll read() until its copy is rendered (tty echo + cat's
  // output), once per turn of the event loop: a 1 ms timer between polls waits 1 ms or more, so the
  // figure counted the bench's own sleeps (2.2-2.5 ms here whether the echo took 0.15 ms or 2).
  const cat = await Pty.open({
    cmd: "cat",
    args: [],
    cwd: dir,
    env,
    cols: 80,
    rows: 24,
    sandbox: null,
  });
  const roundTrips: number[] = [];
  const idleReads: number[] = [];
  try {
    for (let i = 0; i < ROUND_TRIPS; i++) {
      const token = `token-${i}`;
      const start = performance.now();
      await cat.write(encodePtyInput([token, { key: "Enter" }], false));
      while ((await cat.read()).screen.filter((row) => row === token).length < 2) {
        await new Promise((r) => setImmediate(r));
      }
      roundTrips.push(performance.now() - start);
      const idle = performance.now();
      await cat.read();
      idleReads.push(performance.now() - idle);
    }
  } finally {
    await cat.close();
  }
  console.log(`pty: send->rendered round trip: ${percentiles(roundTrips)}`);
  console.log(`pty: read() with no new output: ${percentiles(idleReads)}`);

  const old = await emulatorOld();
  const now = emulatorNew();
  console.log(
    `pty stage: emulator alone, ${EMULATOR_BYTES / 1e6} MB of y\\r\\n: xterm async write ${
      old.toFixed(1)
    } MB/s, ` +
      `feedTerminal ${now.toFixed(1)} MB/s (${(now / old).toFixed(1)}x)`,
  );
  for (const stepMs of [null, STEP_MS]) {
    const master = await masterOnly(dir, stepMs);
    console.log(
      `pty stage: master read alone, ${FLOOD_BYTES / 1e6} MB: ${master.mbps.toFixed(1)} MB/s, ` +
        `${master.reads} read calls, ${(master.bytes / master.reads).toFixed(0)} bytes per call; ` +
        `steps of up to 32 KiB ${
          stepMs === null ? "(waiting for 32 KiB)" : `bounded at ${stepMs} ms`
        }: ` +
        percentiles(master.steps),
    );
  }

  // Flood: `yes | head -c 50000000` rendered through the emulator while reads keep being served.
  const rss0 = Deno.memoryUsage().rss;
  let rssPeak = rss0;
  const start = performance.now();
  const flood = await Pty.open({
    cmd: "sh",
    args: ["-c", `yes | head -c ${FLOOD_BYTES}`],
    cwd: dir,
    env,
    cols: 80,
    rows: 24,
    sandbox: null,
  });
  const floodReads: number[] = [];
  try {
    while (true) {
      const t = performance.now();
      const s = await flood.read();
      if (!s.alive) break;
      floodReads.push(performance.now() - t);
      rssPeak = Math.max(rssPeak, Deno.memoryUsage().rss);
      await new Promise((r) => setTimeout(r, FLOOD_READ_GAP_MS));
    }
  } finally {
    await flood.close();
  }
  const seconds = (performance.now() - start) / 1000;
  console.log(
    `pty: ${FLOOD_BYTES / 1e6} MB of yes output rendered in ${seconds.toFixed(2)} s: ` +
      `${(FLOOD_BYTES / 1e6 / seconds).toFixed(1)} MB/s`,
  );
  console.log(`pty: read() during the flood: ${percentiles(floodReads)}`);
  console.log(
    `pty: RSS during the flood: start ${(rss0 / 2 ** 20).toFixed(0)} MiB, peak ${
      (rssPeak / 2 ** 20).toFixed(0)
    } MiB`,
  );
} finally {
  await Deno.remove(dir, { recursive: true });
}
