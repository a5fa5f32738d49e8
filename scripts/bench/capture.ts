/**
 * Capture throughput: pipes N MiB (default 256) through a CaptureSink in 64 KiB chunks, then
 * hashes the same bytes with `sha256sum` for comparison, and reports the peak RSS.
 *
 *   deno run -A scripts/bench/capture.ts [MiB]
 */
import { CaptureSink } from "../../src/kernel/store/capture.ts";
import { Cas } from "../../src/kernel/store/cas.ts";
import { READ_CHUNK } from "../../src/protocol/limits.ts";

const MiB = 1024 * 1024;
const mib = Number(Deno.args[0] ?? 256);
if (Deno.args.length > 1 || !Number.isInteger(mib) || mib <= 0) {
  console.error("usage: capture.ts [MiB]");
  Deno.exit(2);
}
const size = mib * MiB;

function status(field: string): number {
  const text = Deno.readTextFileSync("/proc/self/status");
  return Number(new RegExp(`${field}:\\s+(\\d+) kB`).exec(text)![1]) * 1024;
}

// Text-like data: printable ASCII with a newline every 80 bytes, varied per chunk.
const chunks = Array.from({ length: 16 }, (_, c) => {
  const chunk = new Uint8Array(READ_CHUNK);
  for (let i = 0; i < chunk.length; i++) {
    chunk[i] = i % 80 === 79 ? 0x0a : 0x21 + ((i * 7 + c) % 90);
  }
  return chunk;
});

const dir = await Deno.makeTempDir({ prefix: "shoal-bench-" });
try {
  const cas = await Cas.open(dir);
  const rssBefore = status("VmRSS");
  const sink = await CaptureSink.open(cas);
  const start = performance.now();
  for (let done = 0, i = 0; done < size; i++) {
    const chunk = chunks[i % chunks.length].subarray(0, Math.min(READ_CHUNK, size - done));
    await sink.write(chunk);
    done += chunk.length;
  }
  const { blob } = await sink.finish();
  const seconds = (performance.now() - start) / 1000;

  const sumStart = performance.now();
  const sum = await new Deno.Command("sha256sum", { args: [cas.blobPath(blob.hash)] }).output();
  const sumSeconds = (performance.now() - sumStart) / 1000;
  const sumHex = new TextDecoder().decode(sum.stdout).split(" ")[0];

  const rate = (s: number) => `${(size / MiB / s).toFixed(0)} MiB/s`;
  console.log(`bytes          ${size} (${size / MiB} MiB)`);
  console.log(
    `capture        ${seconds.toFixed(2)} s  ${rate(seconds)}  (spool + sha256 + UTF-8 scan)`,
  );
  console.log(
    `sha256sum      ${sumSeconds.toFixed(2)} s  ${rate(sumSeconds)}  (same bytes, from page cache)`,
  );
  console.log(`hash match     ${blob.hash === `sha256:${sumHex}`}`);
  console.log(`utf8/lines     ${blob.utf8} / ${blob.lines}`);
  console.log(`rss before     ${(rssBefore / MiB).toFixed(1)} MiB`);
  console.log(`peak rss       ${(status("VmHWM") / MiB).toFixed(1)} MiB`);
} finally {
  await Deno.remove(dir, { recursive: true });
}
