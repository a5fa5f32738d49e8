// A tokens.json that no longer parses (a hand edit, a broken disk) seen by a running kernel and by
// a starting one (T-TOK-1, T-TOK-4, G-STATE-2/3).
import assert from "node:assert/strict";
import { launchKernel, startKernel } from "../../_support/kernel.ts";
import { createToken } from "../../_support/principals.ts";
import type { Rec } from "../../_support/rec.ts";
import { rpcError } from "../../_support/rejection.ts";
import { sandbox } from "../../_support/sandbox.ts";

Deno.test({
  name:
    "T-TOK-1/G-STATE-3 a malformed tokens.json: a running kernel keeps serving the local human and refuses tokens, but a kernel started on it exits 1, so the human's facade finds no kernel [ignored: needs a SPEC decision: G-STATE-3 makes a malformed policy file fatal at startup, the SPEC says nothing of a malformed token store, and the running kernel (T-TOK-4 re-reads it) and a starting one treat the same file differently; whether the store is fatal at startup, or refuses tokens only, is the SPEC's choice]",
  ignore: true,
  fn: async () => {
    const box = await sandbox();
    try {
      const { secret } = await createToken(box, "agent:a", "agent:a");
      const path = `${box.dir}/state/shoal/tokens.json`;
      const first = await startKernel([], box);
      try {
        await Deno.writeTextFile(path, (await Deno.readTextFile(path)).slice(0, 40));
        const human = await first.attach();
        assert.equal(((await human.request("exec", { src: "echo h" })) as Rec).ref, "out:1");
        assert.equal((await rpcError(first.attach("t", secret))).code, -32603);
      } finally {
        await first.stop();
      }
      const next = await launchKernel(box, ["--socket", box.socket()], box.socket());
      try {
        const human = await next.attach();
        assert.equal(((await human.request("exec", { src: "echo h" })) as Rec).ref, "out:1");
        assert.equal((await rpcError(next.attach("t", secret))).code, -32603);
      } finally {
        await next.stop();
      }
    } finally {
      await box.cleanup();
    }
  },
});
