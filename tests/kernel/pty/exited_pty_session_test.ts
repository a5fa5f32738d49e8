/** What a PTY whose program has exited, and which nobody closed, keeps of its session (E-3, K-PTY-11). */
import assert from "node:assert/strict";
import { startKernel } from "../../_support/kernel.ts";
import type { Rec } from "../../_support/rec.ts";
import { waitUntil } from "../../_support/wait.ts";

Deno.test({
  name:
    "E-3 a session whose only PTY's program exited long ago, with nobody attached, makes room when the sessions quota is reached [ignored: found by probe45; needs a SPEC decision: E-3 keeps a session with an open PTY and K-PTY-11 keeps an exited PTY registered until pty.close, so an agent that opens `true` in a PTY in each of 64 sessions and disconnects fills the sessions quota (seen: the human's attach to a new session is then -32040 sessions, until someone attaches to each of them and closes its PTY), each also holding its last screen; a PTY whose program has ended could stop counting as work that keeps its session]",
  ignore: true,
  fn: async () => {
    const k = await startKernel();
    try {
      const agent = await k.attach("left");
      const { pty_id } = await agent.request("pty.open", { cmd: "true", args: [] }) as Rec;
      assert.ok(
        await waitUntil(
          async () => !(await agent.request("pty.read", { pty_id }) as Rec).alive,
          10000,
        ),
      );
      agent.close();
      for (let i = 0; i < 70; i++) (await k.attach(`s${i}`)).close();
      const back = await k.attach("left");
      assert.deepEqual((await back.request("pty.list", {}) as Rec).ptys, []);
    } finally {
      await k.cleanup();
    }
  },
});
