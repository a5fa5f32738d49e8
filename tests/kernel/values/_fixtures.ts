import type { Captured } from "../../../src/kernel/store/blob_info.ts";
import { CaptureSink } from "../../../src/kernel/store/capture.ts";
import { Cas } from "../../../src/kernel/store/cas.ts";
import { BlobValue } from "../../../src/kernel/values/blob_value.ts";
import { outcomeValue } from "../../../src/kernel/values/outcome.ts";
import type { Outcome } from "../../../src/kernel/values/value.ts";

const encoder = new TextEncoder();

/** Runs `fn` with a CAS in a fresh temp state dir, removed afterwards. */
export async function withCas(fn: (cas: Cas, dir: string) => Promise<void>): Promise<void> {
  const dir = await Deno.makeTempDir({ prefix: "shoal-values-" });
  try {
    await fn(await Cas.open(dir), dir);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

/** Captures a text or bytes through a real capture sink, in 64 KiB writes. */
export async function capture(cas: Cas, data: string | Uint8Array): Promise<Captured> {
  const bytes = typeof data === "string" ? encoder.encode(data) : data;
  const sink = await CaptureSink.open(cas);
  for (let at = 0; at < bytes.length; at += 65536) {
    await sink.write(bytes.subarray(at, at + 65536));
  }
  return await sink.finish();
}

/** An outcome of a command that printed `stdout` and `stderr` and exited with `status`. */
export async function outcomeOf(
  cas: Cas,
  stdout: string | Uint8Array,
  stderr: string | Uint8Array = "",
  status: number | null = 0,
  signal: string | null = null,
): Promise<Outcome> {
  return outcomeValue(cas, {
    status,
    signal,
    out: await capture(cas, stdout),
    err: await capture(cas, stderr),
    dur_ns: 36012345,
    pid: 4242,
    cmd: "cmd",
  });
}

/**
 * A str value over a sparse CAS file of `size` bytes that starts with `head` (NUL bytes after it),
 * big enough that reading it whole would show: spooled and adopted under a made-up hash, as a
 * capture adopts its spool (a file put in the store's place directly is one an earlier kernel
 * left, hashed before it is served).
 */
export async function sparseStr(
  cas: Cas,
  head: string,
  size: number,
  lines: number,
): Promise<BlobValue> {
  const hash = "sha256:" + "5".repeat(64);
  const spool = cas.tmpPath();
  await Deno.writeFile(spool, encoder.encode(head));
  await Deno.truncate(spool, size);
  cas.adopt(spool, hash);
  return new BlobValue(cas, "str", hash, 0, size, size, lines);
}
