import assert from "node:assert/strict";
import { kernelTest } from "../../_support/kernel.ts";
import { createToken } from "../../_support/principals.ts";
import type { Rec } from "../../_support/rec.ts";
import { rpcError } from "../../_support/rejection.ts";

kernelTest(
  "E-4/P-PRIN-1 a run by a principal with no policy entry is refused before its source is parsed",
  async (k) => {
    const ghost = await k.attach("default", (await createToken(k.box, "agent:ghost")).secret);
    // A syntax error would be -32001 had the source been parsed first.
    const denied = await rpcError(ghost.request("exec", { src: "if then fi (" }));
    assert.equal(denied.code, -32010, denied.message);
    assert.deepEqual(denied.data, { verdict: "deny", effects: [], reason: "unknown_principal" });
    const human = await k.attach();
    const e = await rpcError(human.request("exec", { src: "if then fi (" }));
    assert.equal(e.code, -32001, "a known principal still gets the parse error");
    assert.equal(((await human.request("exec", { src: "echo ok" }) as Rec).value as Rec).ok, true);
  },
);
