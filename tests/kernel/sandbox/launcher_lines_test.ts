/** The launcher's report lines are bounded: a process in the sandbox can write to that pipe too. */
import assert from "node:assert/strict";
import { lines } from "../../../src/kernel/sandbox/launcher.ts";

Deno.test("a launcher report line over its bound is dropped, not held; the lines around it come through", async () => {
  const encoder = new TextEncoder();
  const chunks = [
    "spare 7\nexit 5 ",
    "0\n",
    "x".repeat(1 << 20),
    "x".repeat(1 << 20) + "\nexit 9 256\n",
  ].map((text) => encoder.encode(text));
  // a byte stream, as a child's stdout is: the launcher's lines are read into one buffer
  const stream = new ReadableStream({
    type: "bytes",
    start(controller) {
      for (const chunk of chunks) controller.enqueue(chunk);
      controller.close();
    },
  });
  const seen: string[] = [];
  for await (const line of lines(stream)) seen.push(line);
  assert.deepEqual(seen, ["spare 7", "exit 5 0", "exit 9 256"]);
});
