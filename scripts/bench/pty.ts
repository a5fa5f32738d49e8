// Benchmark: PTY read round trip (input → rendered screen) and 50 MB output throughput through
// the emulator, with read latency measured while the flood flows.
// Run: deno run -A scripts/bench/pty.ts
import { encodePtyInput } from "../../src/kernel/pty/keys.ts";
import { Pty } from "../../src/kernel/pty/pty.ts";

const ROUND_TRIPS = 200;
/** Gap between reads while waiting for the echo, as a polling client would leave. */
const POLL_MS = 1;
const FLOOD_BYTES = 50_000_000;
const FLOOD_READ_GAP_MS = 20;

function percentiles(samples: number[]): string {
  const sorted = [...samples].sort((a, b) => a - b);
  const pct = (p: number) => sorted[Math.max(0, Math.ceil(p * sorted.length) - 1)].toFixed(2);
  return `p50 ${pct(0.5)} ms, p95 ${pct(0.95)} ms, max ${pct(1)} ms (n=${sorted.length})`;
}

const dir = await Deno.makeTempDir({ prefix: "shoal_bench_pty_" });
const env = { PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin", HOME: dir };
try {
  // Round trip: send a line to `cat` and poll read() until its copy is rendered (tty echo + cat's output).
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
        await new Promise((r) => setTimeout(r, POLL_MS));
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

  // Flood: `yes | head -c 50000000` rendered through the emulator while reads keep being served.
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
} finally {
  await Deno.remove(dir, { recursive: true });
}
