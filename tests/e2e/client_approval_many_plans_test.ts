// M-ELICIT-2 through the real stack (SDK 1.32.2 client → shoal-mcp → autostarted kernel →
// bubblewrap → bash): the form stays open for a slow human however many plans the agent holds.
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
// @ts-types="@modelcontextprotocol/sdk/client/index"
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
// @ts-types="@modelcontextprotocol/sdk/types"
import { ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { hostTest, NEEDS_TIER_B } from "../_support/host.ts";
import { asksInClient, createToken, writePolicy } from "../_support/principals.ts";
import type { Rec } from "../_support/rec.ts";
import { sandbox } from "../_support/sandbox.ts";
import { connectMcp } from "./_mcp.ts";

hostTest(
  "a human who takes 2.5 s to approve in the form has the command run, also for an agent holding 200 plans of 100 long paths each: their plan.list answers response too large, and the facade, which looks at the plan every second for a decision made with shoal-kernel, withdrew the form at the first look and answered -32011 (M-ELICIT-2, K-PLAN-2)",
  NEEDS_TIER_B,
  async () => {
    const box = await sandbox();
    try {
      await writePolicy(`${box.dir}/config/shoal/leash.jsonc`, {
        "agent:e": asksInClient(box.dir),
      });
      const env = { XDG_CONFIG_HOME: `${box.dir}/config` };
      const human = await connectMcp(box, env);
      const asked: Rec[] = [];
      const client = new Client({ name: "shoal-e2e-many-plans", version: "0" }, {
        capabilities: { elicitation: { form: {} } },
      });
      client.setRequestHandler(ElicitRequestSchema, async (request) => {
        asked.push(request.params as Rec);
        await new Promise((resolve) => setTimeout(resolve, 2500));
        return { action: "accept", content: { decision: "approve" } };
      });
      try {
        await human.ok("shoal_exec", { src: `cd '${box.dir}'` });
        const token = (await createToken(box, "agent:e", "e")).secret;
        const agent = await connectMcp(box, { ...env, SHOAL_TOKEN: token }, client);
        try {
          const dir = Array(4).fill("d".repeat(240)).join("/");
          for (let i = 0; i < 200; i++) {
            const paths = Array.from({ length: 100 }, (_, j) => `${dir}/f${i}-${j}`);
            await agent.ok("shoal_plan", { src: `rm ${paths.join(" ")}` });
          }
          await Deno.writeTextFile(`${box.dir}/victim`, "x");
          const sc = await agent.ok("shoal_exec", { src: "rm victim && echo removed" });
          assert.deepEqual((sc.value as Rec).out, { $: "str", v: "removed\n" });
          assert.equal(existsSync(`${box.dir}/victim`), false, "the approved command ran");
          assert.equal(asked.length, 1);
        } finally {
          await agent.close();
        }
      } finally {
        await human.close();
      }
    } finally {
      await box.cleanup();
    }
  },
);
