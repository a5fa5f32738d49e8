import assert from "node:assert/strict";
import { startKernelWithAgent } from "../../_support/kernel.ts";
import { LOCAL_HUMAN, RUNNER } from "../../_support/principals.ts";
import type { Rec } from "../../_support/rec.ts";

Deno.test("J-2/K-JQ-4 a source with a NUL character is journaled as bash ran it: the human reading an agent's row sees the whole command, not the part before the NUL (bash skips the NUL and runs the rest; SQLite text ended at it)", async () => {
  const { kernel: k, token } = await startKernelWithAgent("agent:a", RUNNER);
  try {
    const agent = await k.attach("default", token);
    const hidden = "true\u0000; echo ran past the nul";
    const run = await agent.request("exec", { src: hidden }) as Rec;
    assert.equal(run.render, "ran past the nul");
    const long = "echo x\u0000" + "y".repeat(20_000);
    await agent.request("exec", { src: long });
    await agent.request("exec", { src: "" });
    const human = await k.attach();
    const [empty, second, first] = await human.request("journal.query", {}) as Rec[];
    assert.equal(empty.src, "");
    assert.equal(first.principal, "agent:a");
    assert.equal(first.src, hidden);
    assert.equal(second.src, long.slice(0, 16384) + "…");
    const events = await human.request("events.read", { channel: "journal" }) as Rec;
    const heads = (events.events as Rec[]).map((e) => (e.payload as Rec).head);
    assert.deepEqual(heads, ["true\u0000;", "echo", ""]);
    assert.notEqual(first.principal, LOCAL_HUMAN);
  } finally {
    await k.cleanup();
  }
});
