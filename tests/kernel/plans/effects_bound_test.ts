import assert from "node:assert/strict";
import { startKernelWithAgent } from "../../_support/kernel.ts";
import { memoryKiB } from "../../_support/proc.ts";
import type { Rec } from "../../_support/rec.ts";
import { tmpRunner } from "../../_support/wide_effects.ts";

Deno.test("E-3 the plans of one (session, principal) count their effects' paths in the 64 MiB: 130 KB of relative names in a 3,000-byte deep cwd (60 MB of paths each) do not grow the kernel per plan", async () => {
  const { kernel, token } = await startKernelWithAgent("agent:a", {
    ...tmpRunner("never"),
    session_write: true,
  });
  try {
    const deep = `${kernel.box.dir}/` + Array.from({ length: 12 }, () => "d".repeat(250)).join("/");
    await Deno.mkdir(deep, { recursive: true });
    const agent = await kernel.attach("default", token);
    const names = Array.from({ length: 20000 }, (_, i) => `a${i}`).join(" ");
    const plan = async (i: number) => {
      const e = await agent.request("exec", { src: `cd ${deep} && cat ${names} # ${i}` }).then(
        () => assert.fail("a plan needing approval ran"),
        (e) => e,
      );
      assert.equal(e.code, -32011);
      assert.equal(e.data.effects[0].paths_more, 19900); // every name became an absolute path
      return e.data.plan_ref as string;
    };
    await plan(0);
    const before = memoryKiB(kernel.child.pid).rss;
    let last = "";
    for (let i = 1; i <= 5; i++) last = await plan(i);
    const growthMiB = (memoryKiB(kernel.child.pid).rss - before) / 1024;
    // Before: each plan kept its 60 MB of paths, ~300 MB for these five.
    assert.ok(growthMiB < 150, `kernel RSS grew by ${growthMiB.toFixed(0)} MiB over 5 plans`);
    const listed = (await agent.request("plan.list", {})) as Rec[];
    assert.equal(listed.at(-1)!.plan_ref, last);
    assert.ok(listed.length < 6, `${listed.length} plans of 60 MB of paths each kept`);
  } finally {
    await kernel.cleanup();
  }
});
