/**
 * A refusal a client is still sending to (P-NET-1: "refuses every other with HTTP 403"): a POST
 * whose body the proxy never reads gets its 403 all the same, through the sandbox's forwarder,
 * instead of a connection reset that takes the answer with it.
 */
import assert from "node:assert/strict";
import { exec } from "../../_support/exec.ts";
import { hostTest, NEEDS_TIER_B } from "../../_support/host.ts";
import { startKernelWithAgent, type TestKernel } from "../../_support/kernel.ts";
import { PROJECT_AGENT } from "../../_support/principals.ts";
import type { Rec } from "../../_support/rec.ts";

/**
 * Sends, through the proxy, a POST of argv[1] bytes to a destination no grant names, the whole
 * request before reading; prints what its answer starts with, or the error that took it.
 */
const POST = String.raw`
import os, socket, sys
port = int(os.environ["HTTP_PROXY"].rsplit(":", 1)[1])
size = int(sys.argv[1])
s = socket.create_connection(("127.0.0.1", port))
got = b""
try:
    s.sendall(b"POST http://refused.example/ HTTP/1.1\r\nHost: refused.example\r\n" +
        b"Content-Length: %d\r\n\r\n" % size + b"x" * size)
    while True:
        chunk = s.recv(65536)
        if not chunk: break
        got += chunk
    print(got[:12].decode())
except OSError as e:
    print(type(e).__name__, got[:12])
`;

hostTest(
  "P-NET-1 P-NET-2 a POST of 600 KB and of 3 MB to a destination no grant names gets the proxy's 403 through the sandbox, each time (it got 'Connection reset by peer' and no answer: the proxy closed with the body unread, and the forwarder's reset took the 403 along)",
  NEEDS_TIER_B,
  async () => {
    let k: TestKernel | undefined;
    try {
      const agent = await startKernelWithAgent("agent:n", {
        ...PROJECT_AGENT,
        net_connect: ["granted.example:443"],
      });
      k = agent.kernel;
      const proj = `${k.box.dir}/home/proj`;
      await Deno.mkdir(proj);
      await Deno.writeTextFile(`${proj}/post.py`, POST);
      await exec(await k.attach("work"), `cd ${proj}`);
      const r = await exec(
        await k.attach("work", agent.token),
        "for size in 600000 600000 600000 3000000; do python3 post.py $size; done",
        { position: "value", timeout_ms: 60000 },
      );
      const value = r.value as Rec;
      assert.equal((value.out as Rec).v, "HTTP/1.1 403\n".repeat(4), JSON.stringify(value));
      assert.deepEqual(value.net_refused, ["refused.example:80"]);
    } finally {
      await k?.cleanup();
    }
  },
);
