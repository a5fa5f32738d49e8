import assert from "node:assert/strict";
import { kernelTest } from "../../_support/kernel.ts";
import type { Rec } from "../../_support/rec.ts";
import { rpcError } from "../../_support/rejection.ts";
import { pollUntil } from "../../_support/wait.ts";

kernelTest(
  "G-STATE-2/K-PTY-2 pty.send to a PTY whose program ended answers -32603 each time without growing kernel.log: 500 such sends add no line to it or to stderr (a client's loop grew the log 60 bytes per call, without end)",
  async (k) => {
    const log = `${k.box.dir}/state/shoal/kernel.log`;
    const conn = await k.attach();
    const { pty_id } = await conn.request("pty.open", { cmd: "true" }) as Rec;
    await pollUntil(() => conn.request("pty.read", { pty_id }) as Promise<Rec>, (s) => !s.alive);
    const before = Deno.statSync(log).size;
    const linesBefore = k.stderr.length;
    for (let i = 0; i < 500; i++) {
      const e = await rpcError(conn.request("pty.send", { pty_id, input: "x" }));
      assert.equal(e.code, -32603);
    }
    await conn.request("pty.close", { pty_id });
    assert.equal(Deno.statSync(log).size - before, 0, "kernel.log grew");
    assert.deepEqual(k.stderr.slice(linesBefore), []);
  },
);
