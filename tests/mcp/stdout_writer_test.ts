// The facade's stdout writer on a non-blocking pipe whose reader stalls (issue 13): every frame
// arrives whole and exactly once, in order, however the pipe fills.
import assert from "node:assert/strict";
import { concatBytes } from "../../src/protocol/concat_bytes.ts";
import { delay } from "../_support/wait.ts";

/**
 * Frame lengths (newline included) in two bursts that, before the fix, spliced frames on a
 * non-blocking pipe of one page: the first frame fills 500 bytes of it; the second burst's
 * first 4096 bytes are the second frame (3200, which fits) and 896 of the third (5000), which
 * Rust's stdout buffered and failed to flush, and the writer's retry wrote them all again.
 */
const LEAD = [[500], [3200, 5000]];
/** Frames of varied length after the lead, to 9 KiB, for every other way a piece meets a full pipe. */
const VARIED = 600;

/** Frame `i` as one JSON line of `length` bytes. */
function frame(i: number, length: number): string {
  const bare = JSON.stringify({ i, pad: "" }).length + 1;
  return JSON.stringify({ i, pad: "x".repeat(length - bare) }) + "\n";
}

/** The frames the writer writes, in bursts: the lead, then the varied ones with the second. */
function bursts(): string[][] {
  const varied = Array.from({ length: VARIED }, (_, k) => {
    const hash = Math.imul(k + 1, 2654435761) >>> 0;
    return 40 + hash % (k % 5 === 0 ? 9000 : 1500);
  });
  let i = 0;
  return [LEAD[0], [...LEAD[1], ...varied]].map((burst) => burst.map((n) => frame(i++, n)));
}

/**
 * The writer: the bursts of frames (read from stdin as JSON), each queued at once through the
 * facade's FrameWriter and stdout writer, as the facade queues notifications, and written before
 * the next; "stalled" on stderr once the writes have met the full pipe (their first tries run
 * before any timer).
 */
const WRITER = `
import { FrameWriter } from "${new URL("../../src/protocol/frame_writer.ts", import.meta.url)}";
import { stdoutWriter } from "${new URL("../../src/mcp/stdout_writer.ts", import.meta.url)}";
const out = new FrameWriter(stdoutWriter);
const bursts = JSON.parse(await new Response(Deno.stdin.readable).text());
setTimeout(() => console.error("stalled"), 200);
for (const burst of bursts) {
  await Promise.all(burst.map((f) => out.write(new TextEncoder().encode(f))));
}
`;

/** Execs the rest of its arguments with stdout a non-blocking pipe of one page (Linux). */
const ONE_PAGE_NON_BLOCKING_STDOUT = [
  "python3",
  "-c",
  "import fcntl, os, sys; fcntl.fcntl(1, 1031, 4096); os.set_blocking(1, False); " +
  "os.execv(sys.argv[1], sys.argv[1:])",
];

Deno.test({
  name:
    "stdout written to a non-blocking pipe whose reader stalls carries every frame whole, once, in order (W-FRAME-8, issue 13)",
  ignore: Deno.build.os !== "linux", // F_SETPIPE_SZ, and the page-sized pipe writes, are Linux's
  async fn() {
    const [command, ...prefix] = ONE_PAGE_NON_BLOCKING_STDOUT;
    const child = new Deno.Command(command, {
      args: [...prefix, Deno.execPath(), "eval", "--quiet", WRITER],
      stdin: "piped",
      stdout: "piped",
      stderr: "piped",
    }).spawn();
    const input = child.stdin.getWriter();
    await input.write(new TextEncoder().encode(JSON.stringify(bursts())));
    await input.close();
    const stderr = child.stderr.pipeThrough(new TextDecoderStream()).getReader();
    let said = "";
    while (!said.includes("stalled")) {
      const { value, done } = await stderr.read();
      if (done) break;
      said += value;
    }
    const reader = child.stdout.getReader({ mode: "byob" });
    const chunks: Uint8Array[] = [];
    while (true) {
      const { value, done } = await reader.read(new Uint8Array(4096));
      if (done) break;
      chunks.push(value);
      await delay(1); // the reader stays behind the writer
    }
    const { code } = await child.status;
    for (let r = await stderr.read(); !r.done; r = await stderr.read()) said += r.value;
    const lines = new TextDecoder().decode(concatBytes(chunks)).split("\n");
    const expected = bursts().flat();
    const wrong = lines.findIndex((line, i) => i < expected.length && line + "\n" !== expected[i]);
    assert.equal(
      wrong,
      -1,
      `line ${wrong}: ${lines[wrong]?.slice(0, 60)}…${lines[wrong]?.slice(-20)}`,
    );
    assert.deepEqual(lines.slice(expected.length), [""], "nothing after the last frame");
    assert.equal(code, 0, said);
  },
});
