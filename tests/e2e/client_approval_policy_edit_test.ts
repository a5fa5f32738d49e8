// M-ELICIT-2 after a policy edit (M-ONB-1): the facade decides whether to ask the human in its
// client from the `caps.approve_in_client` of its attach, while the kernel judges `plan.approve
// via client` under the policy in force. Ignored until the SPEC decides how the facade learns.
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
// @ts-types="@modelcontextprotocol/sdk/client/index"
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
// @ts-types="@modelcontextprotocol/sdk/types"
import { ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { asksInClient, createToken, writePolicy } from "../_support/principals.ts";
import type { Rec } from "../_support/rec.ts";
import { sandbox } from "../_support/sandbox.ts";
import { connectMcp } from "./_mcp.ts";

/**
 * A sandboxed agent whose irreversible work below `dir` needs approval; `approve_in_client` as
 * given.
 */
const agentEntry = (dir: string, inClient: boolean) => ({
  ...asksInClient(dir),
  approve_in_client: inClient,
});

Deno.test({
  name:
    "SPEC decision needed (M-ELICIT-2 / M-ONB-1): after the human sets approve_in_client false for an agent whose facade is open, the facade still asks the human in the client (its attach said true) and the approval given there is refused by the kernel and dropped without a word; this test expects no form",
  ignore: true,
  fn: async () => {
    const box = await sandbox();
    try {
      const policy = `${box.dir}/config/shoal/leash.jsonc`;
      await writePolicy(policy, { "agent:e": agentEntry(box.dir, true) });
      const env = { XDG_CONFIG_HOME: `${box.dir}/config` };
      const token = (await createToken(box, "agent:e", "e")).secret;
      const human = await connectMcp(box, env);
      const asked: Rec[] = [];
      const client = new Client({ name: "shoal-e2e-elicit", version: "0" }, {
        capabilities: { elicitation: { form: {} } },
      });
      client.setRequestHandler(ElicitRequestSchema, (request) => {
        asked.push(request.params as Rec);
        return Promise.resolve({ action: "accept", content: { decision: "approve" } });
      });
      try {
        await human.ok("shoal_exec", { src: `cd '${box.dir}'` });
        const victim = `${box.dir}/victim`;
        await Deno.writeTextFile(victim, "x");
        const agent = await connectMcp(box, { ...env, SHOAL_TOKEN: token }, client);
        try {
          await writePolicy(policy, { "agent:e": agentEntry(box.dir, false) });
          const r = await agent.call("shoal_exec", { src: `rm '${victim}'` });
          assert.equal(r.isError, true);
          assert.equal((r.structuredContent as Rec).code, -32011);
          assert.equal(existsSync(victim), true, "nothing ran");
          assert.equal(asked.length, 0, "the human was asked in the client, for nothing");
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
});
