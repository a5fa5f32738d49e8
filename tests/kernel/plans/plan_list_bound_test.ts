// K-PLAN-2 / W-RPC-5: plan.list answers the caller's plans whole, bounded by nothing but the frame.
import assert from "node:assert/strict";
import { startKernelWithAgent } from "../../_support/kernel.ts";
import { AGENT_RIGHTS } from "../../_support/principals.ts";

Deno.test({
  name:
    "K-PLAN-2 plan.list answers for an agent holding 200 plans of 100 long paths each [ignored: defect found by the probe round; needs a SPEC decision: K-PLAN-2 lists every plan of the caller (up to 1000, P-PLAN-3) with its effects (K-EFF-7: 100 paths of 1024 bytes per kind), not bounded by construction as W-RPC-5 wants, so 200 plans of `rm` with 100 ~1 KB paths (20 MB of source, under E-3's 64 MiB) make plan.list answer -32603 response too large, and the plan list nobody can read; paging, a byte budget, or fewer effects per listed plan is the SPEC's choice]",
  ignore: true,
  async fn() {
    const { kernel: k, token } = await startKernelWithAgent("agent:a", {
      ...AGENT_RIGHTS,
      fs: { read: ["~/proj/**"], write: ["~/proj/**"], delete: ["~/proj/**"] },
      auto_apply: "reversible",
      sandbox: false,
    });
    try {
      const proj = `${k.box.dir}/home/proj`;
      await Deno.mkdir(proj, { recursive: true });
      const human = await k.attach("default");
      await human.request("exec", { src: `cd '${proj}'` });
      const agent = await k.attach("default", token);
      const dir = Array(4).fill("d".repeat(240)).join("/");
      for (let i = 0; i < 200; i++) {
        const paths = Array.from({ length: 100 }, (_, j) => `${dir}/f${i}-${j}`);
        await agent.request("exec", { src: `rm ${paths.join(" ")}`, mode: "plan" });
      }
      const listed = await agent.request("plan.list", {}) as unknown[];
      assert.equal(listed.length, 200);
      human.close();
      agent.close();
    } finally {
      await k.cleanup();
    }
  },
});
