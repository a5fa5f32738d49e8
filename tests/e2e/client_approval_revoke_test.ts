// M-ELICIT-2 through the real stack (SDK 1.32.2 client → shoal-mcp → autostarted kernel →
// bubblewrap → bash): the approval form tells the human how to take an approval back, and the
// command it names reaches the kernel that holds the plan, as the -32011 message's does.
import assert from "node:assert/strict";
// @ts-types="@modelcontextprotocol/sdk/client/index"
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
// @ts-types="@modelcontextprotocol/sdk/types"
import { ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { hostTest, NEEDS_TIER_B } from "../_support/host.ts";
import { asksInClient, createToken, kernelCli, writePolicy } from "../_support/principals.ts";
import type { Rec } from "../_support/rec.ts";
import { sandbox } from "../_support/sandbox.ts";
import { connectMcp } from "./_mcp.ts";

hostTest(
  "the form's `shoal-kernel deny` takes the approval back from the kernel holding the plan: a facade of session `work` talks to work.sock, and the bare command reached default.sock's kernel (unknown plan), so the approved plan stayed approved (M-ELICIT-2, G-SOCK-1, K-CLI-3)",
  NEEDS_TIER_B,
  async () => {
    const box = await sandbox();
    try {
      await writePolicy(`${box.dir}/config/shoal/leash.jsonc`, {
        "agent:e": asksInClient(box.dir),
      });
      const env = { XDG_CONFIG_HOME: `${box.dir}/config` };
      // the human's own facade runs the default session's kernel (default.sock)
      const human = await connectMcp(box, env);
      const agentEnv = { ...env, SHOAL_SESSION: "work" };
      // and the session `work` on its own kernel (work.sock), in the sandbox dir
      const humanAtWork = await connectMcp(box, agentEnv);
      await humanAtWork.ok("shoal_exec", { src: `cd '${box.dir}'` });
      const token = (await createToken(box, "agent:e", "e")).secret;
      const asked: Rec[] = [];
      const client = new Client({ name: "shoal-e2e-revoke", version: "0" }, {
        capabilities: { elicitation: { form: {} } },
      });
      client.setRequestHandler(ElicitRequestSchema, (request) => {
        asked.push(request.params as Rec);
        return Promise.resolve({ action: "accept", content: { decision: "approve" } });
      });
      try {
        const agent = await connectMcp(box, { ...agentEnv, SHOAL_TOKEN: token }, client);
        try {
          await Deno.writeTextFile(`${box.dir}/victim`, "x");
          const sc = await agent.ok("shoal_exec", { src: "rm victim" });
          assert.equal((sc.value as Rec).ok, true, "approved in the form, it ran");
          assert.equal(asked.length, 1);
          const message = String(asked[0].message);
          const planRef = /Plan: (plan:[0-9a-f]{32})/.exec(message)![1];
          const named = /`shoal-kernel (deny plan:[0-9a-f]{32}[^`]*)`/.exec(message);
          assert.ok(named !== null, message);
          // the human runs it as shown, from a terminal with the client's environment
          const words = named[1].split(" ").map((w) => w.replace(/^'(.*)'$/, "$1"));
          const denied = await kernelCli(box, words, agentEnv);
          assert.equal(denied.code, 0, `${named[1]}: ${denied.stderr}`);
          const plan = await agent.read(`shoal://plan/${planRef.slice(5)}`);
          assert.equal((plan.structuredContent as Rec).approval, "denied");
        } finally {
          await agent.close();
        }
      } finally {
        await humanAtWork.close();
        await human.close();
      }
    } finally {
      await box.cleanup();
    }
  },
);
