// A child's stdout read as the benches' subscribers read a socket: into one reused buffer, framed
// and decoded like the socket connections, each frame with the moment its chunk was read.
import { type ByteReader, readMessageBatches } from "../../src/protocol/framing.ts";
import { READ_CHUNK } from "../../src/protocol/limits.ts";
import type { Incoming } from "../../src/protocol/rpc.ts";

/**
 * `stream` (a child's stdout) as a {@link ByteReader} that reads into one reused buffer (a BYOB
 * read; the default reader allocates a 64 KiB chunk per read), and when its last read completed.
 */
function pipeReader(stream: ReadableStream<Uint8Array>): ByteReader & { readAt: number } {
  const reader = stream.getReader({ mode: "byob" });
  let buffer = new ArrayBuffer(READ_CHUNK);
  return {
    readAt: 0,
    async read(p: Uint8Array): Promise<number | null> {
      const { value, done } = await reader.read(new Uint8Array(buffer, 0, p.length));
      this.readAt = performance.now();
      if (done || value === undefined) return null;
      buffer = value.buffer as ArrayBuffer;
      p.set(value);
      return value.length;
    },
  };
}

/**
 * Reads `child`'s stdout frames with the framing and decoding of the socket subscribers'
 * connections (readMessageBatches), calling `onFrame` with each and the moment its chunk was
 * read (before any parsing); ends with the stream.
 */
export async function readFrames(
  child: Deno.ChildProcess,
  onFrame: (msg: Incoming, at: number) => void,
) {
  const source = pipeReader(child.stdout);
  for await (const batch of readMessageBatches(source, "mcp")) {
    for (const msg of batch) onFrame(msg, source.readAt);
  }
}
