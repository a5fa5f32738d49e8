// What an agent holding transcript refs sees across a kernel restart, as after an upgrade
// (G-STATE-5, V-REF-1, M-START-4).
import assert from "node:assert/strict";
import { launchKernel } from "../../_support/kernel.ts";
import type { Rec } from "../../_support/rec.ts";
import { rpcError } from "../../_support/rejection.ts";
import { sandbox } from "../../_support/sandbox.ts";

Deno.test({
  name:
    "V-REF-1/G-STATE-5 an out:N from before a kernel restart is refused afterwards, not answered with another run's value [ignored: needs a SPEC decision: V-REF-1 numbers each session's refs from 1 and forbids reuse only within a kernel lifetime, so after a restart (an upgrade) out:1 names the new kernel's first run; the facade re-attaches silently (M-START-4) and the durable session.transcript channel still announces the old out:1, so an agent's shoal_get of a ref it got before gets another command's output with no error. Whether numbering continues from the session's stored transcript (the old refs then -32004), or refs carry a kernel epoch, is the SPEC's choice]",
  ignore: true,
  fn: async () => {
    const box = await sandbox();
    try {
      const first = await launchKernel(box, ["--socket", box.socket()], box.socket());
      try {
        const human = await first.attach("work");
        assert.equal(((await human.request("exec", { src: "echo before" })) as Rec).ref, "out:1");
      } finally {
        await first.stop();
      }
      const next = await launchKernel(box, ["--socket", box.socket()], box.socket());
      try {
        const human = await next.attach("work");
        const after = (await human.request("exec", { src: "echo after" })) as Rec;
        assert.notEqual(after.ref, "out:1", "a ref of the previous kernel is not given again");
        assert.equal((await rpcError(human.request("value.get", { ref: "out:1" }))).code, -32004);
      } finally {
        await next.stop();
      }
    } finally {
      await box.cleanup();
    }
  },
});
