// M-ELICIT-1/2 through the real stack (SDK 1.32.2 clients → shoal-mcp → autostarted kernel →
// bubblewrap → bash): a sandboxed agent whose command needs approval is asked in its own client
// by `elicitation/create` during the call; approve runs it, deny refuses it, decline and clients
// without the capability get today's -32011, and an unsandboxed agent is never asked.
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
// @ts-types="@modelcontextprotocol/sdk/client/index"
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
// @ts-types="@modelcontextprotocol/sdk/types"
import {
  CallToolResultSchema,
  CreateTaskResultSchema,
  ElicitRequestSchema,
  type ElicitResult,
} from "@modelcontextprotocol/sdk/types.js";
import { RpcConnection } from "../../src/protocol/rpc_client.ts";
import { hostTest, NEEDS_TIER_B } from "../_support/host.ts";
import { asksInClient, createToken, kernelCli, writePolicy } from "../_support/principals.ts";
import type { Rec } from "../_support/rec.ts";
import { RawFacade } from "../_support/facade.ts";
import { rpcError } from "../_support/rejection.ts";
import { type Sandbox, sandbox } from "../_support/sandbox.ts";
import { connectMcp, type Mcp } from "./_mcp.ts";

/** An SDK client declaring form elicitation, answering every form with `answer`; `asked` records the requests. */
function elicitingClient(answer: ElicitResult, asked: Rec[]): Client {
  const client = new Client({ name: "shoal-e2e-elicit", version: "0" }, {
    capabilities: { elicitation: { form: {} } },
  });
  client.setRequestHandler(ElicitRequestSchema, (request) => {
    asked.push(request.params as Rec);
    return Promise.resolve(answer);
  });
  return client;
}

interface World {
  box: Sandbox;
  human: Mcp;
  victim: string;
  tokens: Record<string, string>;
}

/** A sandbox whose policy holds `agent:e` (asks in client) and `agent:open` (unsandboxed); the human's session is in the sandbox dir. */
async function world(body: (w: World) => Promise<void>): Promise<void> {
  const box = await sandbox();
  try {
    await writePolicy(`${box.dir}/config/shoal/leash.jsonc`, {
      "agent:e": asksInClient(box.dir),
      "agent:open": { ...asksInClient(box.dir), sandbox: false },
    });
    const env = { XDG_CONFIG_HOME: `${box.dir}/config` };
    const tokens = {
      "agent:e": (await createToken(box, "agent:e", "e")).secret,
      "agent:open": (await createToken(box, "agent:open", "open")).secret,
    };
    const human = await connectMcp(box, env);
    try {
      await human.ok("shoal_exec", { src: `cd '${box.dir}'` });
      const victim = `${box.dir}/victim`;
      await Deno.writeTextFile(victim, "x");
      await body({ box, human, victim, tokens });
    } finally {
      await human.close();
    }
  } finally {
    await box.cleanup();
  }
}

/** A facade for `principal`'s token, with `client`. */
function agentMcp(w: World, principal: string, client?: Client): Promise<Mcp> {
  return connectMcp(w.box, {
    XDG_CONFIG_HOME: `${w.box.dir}/config`,
    SHOAL_TOKEN: w.tokens[principal],
  }, client);
}

/** What {@link withAgent}'s client answers every form with. */
const APPROVE: ElicitResult = { action: "accept", content: { decision: "approve" } };

/**
 * Runs `body` with a facade for `principal` whose client answers every form with `answer` (the
 * forms land in `asked`), and closes it.
 */
async function withAgent(
  w: World,
  principal: string,
  answer: ElicitResult,
  body: (agent: Mcp, asked: Rec[]) => Promise<void>,
): Promise<void> {
  const asked: Rec[] = [];
  const agent = await agentMcp(w, principal, elicitingClient(answer, asked));
  try {
    await body(agent, asked);
  } finally {
    await agent.close();
  }
}

/** The -32011 error a `shoal_exec` of `rm` on the victim answers with. */
async function refusedRm(w: World, agent: Mcp): Promise<{ code: number; data: Rec }> {
  const r = await agent.call("shoal_exec", { src: `rm '${w.victim}'` });
  assert.equal(r.isError, true);
  const error = r.structuredContent as { code: number; data: Rec };
  assert.equal(error.code, -32011);
  return error;
}

async function planApproval(agent: Mcp, planRef: string): Promise<unknown> {
  const plan = await agent.read(`shoal://plan/${planRef.slice(5)}`);
  return (plan.structuredContent as Rec).approval;
}

/** A raw facade of `agent:e` (who asks in the client) in `w`. */
function agentFacade(w: World): RawFacade {
  return new RawFacade(w.box, [], {
    XDG_CONFIG_HOME: `${w.box.dir}/config`,
    SHOAL_TOKEN: w.tokens["agent:e"],
  });
}

/**
 * Initializes `facade` at protocol `version` with elicitation declared, sends `tools/call` (id 2)
 * of `rm victim`, and returns the `elicitation/create` request it asks the client.
 */
async function askedToRemove(facade: RawFacade, victim: string, version: string): Promise<Rec> {
  await facade.request(1, "initialize", {
    protocolVersion: version,
    capabilities: { elicitation: {} },
    clientInfo: { name: "raw", version: "0" },
  });
  await facade.send({
    jsonrpc: "2.0",
    id: 2,
    method: "tools/call",
    params: { name: "shoal_exec", arguments: { src: `rm '${victim}'` } },
  });
  return await facade.next((f) => f.method === "elicitation/create");
}

hostTest(
  "approve in the client: the call returns the command's output, the form names command, effects, reversibility and plan, and the journal row says 'agent:e via client' (M-ELICIT-2)",
  NEEDS_TIER_B,
  () =>
    world((w) =>
      withAgent(w, "agent:e", APPROVE, async (agent, asked) => {
        const sc = await agent.ok("shoal_exec", { src: `rm '${w.victim}' && echo removed` });
        const value = sc.value as Rec;
        assert.equal(value.ok, true);
        assert.deepEqual(value.out, { $: "str", v: "removed\n" });
        assert.equal(existsSync(w.victim), false, "the approved command ran");

        assert.equal(asked.length, 1);
        const form = asked[0];
        assert.equal(form.mode, "form");
        const message = String(form.message);
        assert.ok(message.includes(`rm '${w.victim}' && echo removed`), message);
        assert.match(message, /^- fs_delete .*victim$/m);
        assert.match(message, /Reversibility: irreversible/);
        const planRef = /Plan: (plan:[0-9a-f]{32})/.exec(message)?.[1];
        assert.ok(planRef, message);
        assert.deepEqual(form.requestedSchema, {
          type: "object",
          properties: {
            decision: {
              type: "string",
              title: "Decision",
              description: "Approve this plan and run it now, or deny it.",
              enum: ["approve", "deny"],
            },
          },
          required: ["decision"],
        });
        assert.equal(await planApproval(agent, planRef), "approved");
        const rows = (await agent.ok("shoal_journal", { limit: 1 })).items as Rec[];
        assert.equal(rows[0].src, `rm '${w.victim}' && echo removed`);
        assert.equal(rows[0].approved_by, "agent:e via client");
      })
    ),
);

hostTest(
  "the form names the directory the plan runs in: after the agent's cd into a subdirectory, a relative `rm victim` is asked about with that directory (M-ELICIT-2, P-PLAN-2)",
  NEEDS_TIER_B,
  () =>
    world((w) =>
      withAgent(w, "agent:e", APPROVE, async (agent, asked) => {
        const sub = `${w.box.dir}/sub`;
        await Deno.mkdir(sub);
        await Deno.writeTextFile(`${sub}/victim`, "x");
        await agent.ok("shoal_exec", { src: "cd sub" });
        assert.equal(asked.length, 0, "a cd is asked about by nobody");
        const sc = await agent.ok("shoal_exec", { src: "rm victim" });
        assert.equal((sc.value as Rec).ok, true);
        assert.equal(existsSync(`${sub}/victim`), false);
        const lines = String(asked[0].message).split("\n");
        assert.ok(lines.includes(`Directory: ${sub}`), lines.join("\n"));
      })
    ),
);

hostTest(
  "approve in the client says what the approval allows: the agent's later shoal_apply of the same plan runs again without a form, so the form tells the human so and how to take it back (M-ELICIT-2, K-PLAN-3)",
  NEEDS_TIER_B,
  () =>
    world((w) =>
      withAgent(w, "agent:e", APPROVE, async (agent, asked) => {
        const sc = await agent.ok("shoal_exec", { src: `rm '${w.victim}'` });
        assert.equal((sc.value as Rec).ok, true);
        const message = String(asked[0].message);
        const planRef = /Plan: (plan:[0-9a-f]{32})/.exec(message)![1];
        await Deno.writeTextFile(w.victim, "again");
        const again = await agent.ok("shoal_apply", { plan_ref: planRef });
        assert.equal((again.value as Rec).ok, true);
        assert.equal(existsSync(w.victim), false, "the plan ran a second time");
        assert.equal(asked.length, 1, "without a second form");
        assert.ok(
          message.includes("again later without asking") &&
            message.includes(`shoal-kernel deny ${planRef}`),
          message,
        );
      })
    ),
);

hostTest(
  "deny in the client: the call is today's -32011 error with data.decision 'denied', nothing ran and the plan is denied (M-ELICIT-2)",
  NEEDS_TIER_B,
  () =>
    world((w) =>
      withAgent(
        w,
        "agent:e",
        { action: "accept", content: { decision: "deny" } },
        async (agent, asked) => {
          const error = await refusedRm(w, agent);
          assert.equal(error.data.decision, "denied");
          assert.equal(asked.length, 1);
          assert.equal(existsSync(w.victim), true, "nothing ran");
          assert.equal(await planApproval(agent, String(error.data.plan_ref)), "denied");
        },
      )
    ),
);

hostTest(
  "decline in the client, and a client without the elicitation capability: exactly today's -32011, the plan stays pending (M-ELICIT-2)",
  NEEDS_TIER_B,
  () =>
    world(async (w) => {
      const asked: Rec[] = [];
      const declining = await agentMcp(w, "agent:e", elicitingClient({ action: "decline" }, asked));
      const plain = await agentMcp(w, "agent:e");
      try {
        for (const agent of [declining, plain]) {
          const error = await refusedRm(w, agent);
          assert.deepEqual(Object.keys(error.data).sort(), [
            "effects",
            "needs_approval",
            "plan_ref",
            "verdict",
          ]);
          assert.deepEqual(error.data.needs_approval, [
            `reversibility "irreversible" (the policy says auto_apply "reversible")`,
          ]);
          assert.equal(await planApproval(agent, String(error.data.plan_ref)), "pending");
        }
        assert.equal(asked.length, 1, "only the declining client was asked");
        assert.equal(existsSync(w.victim), true, "nothing ran");
      } finally {
        await declining.close();
        await plain.close();
      }
    }),
);

hostTest(
  "the form says first which path needs approval, however many harmless paths the command also writes (M-ELICIT-2: `touch ./-0 … ./-29 .vscode/tasks.json`)",
  NEEDS_TIER_B,
  () =>
    world((w) =>
      withAgent(w, "agent:e", { action: "decline" }, async (agent, asked) => {
        const tasks = `${w.box.dir}/.vscode/tasks.json`;
        const r = await agent.call("shoal_exec", {
          src: `touch ${
            Array.from({ length: 30 }, (_, i) => `'${w.box.dir}/-${i}'`).join(" ")
          } '${tasks}'`,
        });
        const error = r.structuredContent as { code: number; data: Rec };
        assert.equal(error.code, -32011);
        const because = [`fs.write ${JSON.stringify(tasks)} is a protected name`];
        assert.deepEqual(error.data.needs_approval, because);
        assert.equal(asked.length, 1);
        const lines = String(asked[0].message).split("\n");
        assert.deepEqual(lines.slice(0, 5), [
          "The agent's command needs your approval (shoal).",
          "",
          "Because:",
          `- ${because[0]}`,
          "",
        ]);
        assert.equal(existsSync(`${w.box.dir}/-0`), false, "nothing ran");
      })
    ),
);

hostTest(
  "an unsandboxed agent is never asked (-32011 as today), and its direct plan.approve via client is -32010 not_approver (M-ELICIT-1/2)",
  NEEDS_TIER_B,
  () =>
    world((w) =>
      withAgent(w, "agent:open", APPROVE, async (agent, asked) => {
        const error = await refusedRm(w, agent);
        assert.equal(asked.length, 0, "no elicitation");
        assert.equal(existsSync(w.victim), true);

        const conn = await RpcConnection.connect(w.box.socket());
        try {
          await conn.request("session.attach", { token: w.tokens["agent:open"] });
          const refused = await rpcError(
            conn.request("plan.approve", { plan_ref: error.data.plan_ref, via: "client" }),
          );
          assert.equal(refused.code, -32010);
          assert.equal((refused.data as Rec).reason, "not_approver");
        } finally {
          conn.close();
        }
      })
    ),
);

hostTest(
  "the client cancelling the tool call cancels the elicitation: the facade withdraws elicitation/create with notifications/cancelled, answers nothing, and the plan stays pending (M-ELICIT-2)",
  NEEDS_TIER_B,
  () =>
    world(async (w) => {
      const facade = agentFacade(w);
      try {
        const ask = await askedToRemove(facade, w.victim, "2025-11-25");
        ElicitRequestSchema.parse(ask);
        const planRef = /Plan: (plan:[0-9a-f]{32})/.exec(String((ask.params as Rec).message))![1];
        await facade.send({
          jsonrpc: "2.0",
          method: "notifications/cancelled",
          params: { requestId: 2, reason: "user stopped" },
        });
        const withdrawn = await facade.next((f) => f.method === "notifications/cancelled");
        assert.equal((withdrawn.params as Rec).requestId, ask.id);
        // A late answer to the withdrawn form changes nothing.
        await facade.send({
          jsonrpc: "2.0",
          id: ask.id,
          result: { action: "accept", content: { decision: "approve" } },
        });
        const plan = await facade.request(3, "resources/read", {
          uri: `shoal://plan/${planRef.slice(5)}`,
        });
        const contents = (plan.result as { contents: { text: string }[] }).contents;
        assert.equal(JSON.parse(contents[0].text).approval, "pending");
        assert.equal(
          facade.queued.some((f) => (f as Rec).id === 2),
          false,
          "no answer to the call",
        );
        assert.equal(existsSync(w.victim), true);
      } finally {
        await facade.stop();
      }
    }),
);

hostTest(
  "a task-augmented shoal_exec that needs approval asks during the call that creates the task; approved, the task runs the plan and its result is the command's output (M-ELICIT-2, M-TASKS-1)",
  NEEDS_TIER_B,
  () =>
    world((w) =>
      withAgent(w, "agent:e", APPROVE, async (agent, asked) => {
        const src = `rm '${w.victim}' && echo removed`;
        const created = await agent.client.request({
          method: "tools/call",
          params: { name: "shoal_exec", arguments: { src }, task: {} },
        }, CreateTaskResultSchema);
        assert.equal(asked.length, 1);
        assert.match(String((created._meta as Rec)["shoal/task"]), /^task:[0-9]+$/);
        const result = await agent.client.request({
          method: "tasks/result",
          params: { taskId: created.task.taskId },
        }, CallToolResultSchema);
        assert.equal(result.isError, false);
        const value = (result.structuredContent as Rec).value as Rec;
        assert.deepEqual(value.out, { $: "str", v: "removed\n" });
        assert.equal(existsSync(w.victim), false);
      })
    ),
);

hostTest(
  "a command whose syntax tree no frame can carry (plan.get answers response too large) is still asked about in the client, its form cut to 2000 bytes like any other (M-ELICIT-2, E-4)",
  NEEDS_TIER_B,
  () =>
    world((w) =>
      withAgent(w, "agent:e", APPROVE, async (agent, asked) => {
        // 60,000 `:` lines: 120 kB of source, about 18 MB of AST JSON
        const src = `rm '${w.victim}' && echo removed\n${":\n".repeat(60_000)}`;
        const sc = await agent.ok("shoal_exec", { src });
        assert.deepEqual((sc.value as Rec).out, { $: "str", v: "removed\n" });
        assert.equal(asked.length, 1, "the human was asked in the client");
        const lines = String(asked[0].message).split("\n");
        assert.ok(lines.includes(`│ rm '${w.victim}' && echo removed`), lines.join("\n"));
        assert.match(lines.at(-1)!, /^\(the command goes on: \d+ more bytes are not shown here\)$/);
        assert.ok(lines.includes("Effects:"), lines.join("\n"));
      })
    ),
);

hostTest(
  "shoal_apply of a stored plan whose syntax tree no frame can carry is asked about in the client too: the form takes the source from approval.list when plan.get answers response too large (M-ELICIT-2, E-4, K-APPR-4)",
  NEEDS_TIER_B,
  () =>
    world((w) =>
      withAgent(w, "agent:e", APPROVE, async (agent, asked) => {
        // 60,000 `:` lines: 120 kB of source, about 18 MB of AST JSON
        const src = `rm '${w.victim}' && echo removed\n${":\n".repeat(60_000)}`;
        const plan = await agent.ok("shoal_exec", { src, mode: "plan" });
        assert.equal(plan.approval, "pending");
        const sc = await agent.ok("shoal_apply", { plan_ref: plan.plan_ref });
        assert.deepEqual((sc.value as Rec).out, { $: "str", v: "removed\n" });
        assert.equal(asked.length, 1, "the human was asked in the client");
        const lines = String(asked[0].message).split("\n");
        assert.ok(lines.includes(`│ rm '${w.victim}' && echo removed`), lines.join("\n"));
        assert.ok(lines.includes(`Plan: ${plan.plan_ref}`), lines.join("\n"));
        // approval.list holds 65536 bytes of the 120 kB: the form does not say how much is left.
        assert.match(
          lines.at(-1)!,
          /^\(the command goes on: more than \d+ bytes are not shown here\)$/,
        );
      })
    ),
);

hostTest(
  "a command needing approval in a session whose cwd its sandbox does not show is refused with -32010 cwd_outside_sandbox before any plan is stored, so the human is not asked in the client to approve a run that could never start (P-SBX-3, M-ELICIT-2)",
  NEEDS_TIER_B,
  () =>
    world(async (w) => {
      // The human takes the shared session where agent:e's sandbox shows nothing: not below /tmp,
      // nor a system root (the checkout may be below /tmp, as a CI clone is).
      await w.human.ok("shoal_exec", { src: "cd /var" });
      await withAgent(w, "agent:e", APPROVE, async (agent, asked) => {
        const r = await agent.call("shoal_exec", { src: `rm '${w.victim}'` });
        const error = r.structuredContent as { code: number; data: Rec };
        assert.equal(error.code, -32010, JSON.stringify(error));
        assert.equal(error.data.reason, "cwd_outside_sandbox");
        assert.equal(asked.length, 0, "no form for a run that cannot start");
        assert.equal(existsSync(w.victim), true, "nothing ran");
        const conn = await RpcConnection.connect(w.box.socket());
        try {
          await conn.request("session.attach", { token: w.tokens["agent:e"] });
          assert.deepEqual(await conn.request("plan.list", {}), [], "no plan is stored");
        } finally {
          conn.close();
        }
      });
    }),
);

Deno.test({
  name:
    "P-SBX-3/M-ELICIT-2 a plan stored by shoal_plan in a session whose cwd the agent's sandbox does not show is refused before anyone is asked to approve it [ignored: defect found by the probe round; needs a SPEC decision: P-SBX-3 refuses such an exec with 'nothing runs, no plan is stored', but K-EXEC-7 stores plan-mode plans without looking at the sandbox and K-PLAN-3 answers -32011 before the run's sandbox is built, so shoal_apply asks the human in the client and the approved run then fails with -32010 cwd_outside_sandbox; decide whether plan mode refuses, or plan.apply checks the cwd before -32011]",
  ignore: true,
  fn: () =>
    world(async (w) => {
      await w.human.ok("shoal_exec", { src: "cd /var" });
      await withAgent(w, "agent:e", APPROVE, async (agent, asked) => {
        const plan = await agent.call("shoal_exec", { src: `rm '${w.victim}'`, mode: "plan" });
        if (plan.isError) {
          assert.equal((plan.structuredContent.data as Rec).reason, "cwd_outside_sandbox");
        } else {
          const r = await agent.call("shoal_apply", { plan_ref: plan.structuredContent.plan_ref });
          const error = r.structuredContent as { code: number; data: Rec };
          assert.equal(error.code, -32010, JSON.stringify(error));
          assert.equal(error.data.reason, "cwd_outside_sandbox");
        }
        assert.equal(asked.length, 0, "no form for a run that cannot start");
        assert.equal(existsSync(w.victim), true, "nothing ran");
      });
    }),
});

Deno.test({
  name:
    "M-ELICIT-1/2 a deny in the client stands when the plan was approved with shoal-kernel approve while the form was open: the human's last word is no, so nothing runs [ignored: defect found by the probe round; needs a SPEC decision: M-ELICIT-1 takes plan.deny via client only for a pending plan, so the facade's deny of a plan the CLI approved meanwhile is refused, the call answers the -32011 it would have without elicitation, and the agent's next shoal_apply runs it]",
  ignore: true,
  fn: () =>
    world(async (w) => {
      const client = new Client({ name: "shoal-e2e-elicit", version: "0" }, {
        capabilities: { elicitation: { form: {} } },
      });
      client.setRequestHandler(ElicitRequestSchema, async (request) => {
        const planRef = /Plan: (plan:[0-9a-f]{32})/.exec(String(request.params.message))![1];
        const approved = await kernelCli(w.box, ["approve", planRef]);
        assert.equal(approved.code, 0, approved.stderr);
        return { action: "accept", content: { decision: "deny" } };
      });
      const agent = await agentMcp(w, "agent:e", client);
      try {
        const error = await refusedRm(w, agent);
        await agent.call("shoal_apply", { plan_ref: error.data.plan_ref });
        assert.equal(existsSync(w.victim), true, "the plan the human denied in the client ran");
      } finally {
        await agent.close();
      }
    }),
});

hostTest(
  "the form's `mode` member goes only to clients that negotiated 2025-11-25, where it was introduced: a 2025-06-18 client declaring elicitation gets exactly the form of its version, {message, requestedSchema} (M-PROTO-1, M-ELICIT-2)",
  NEEDS_TIER_B,
  () =>
    world(async (w) => {
      for (
        const [version, members] of [
          ["2025-06-18", ["message", "requestedSchema"]],
          ["2025-11-25", ["message", "mode", "requestedSchema"]],
        ] as const
      ) {
        const facade = agentFacade(w);
        try {
          const ask = await askedToRemove(facade, w.victim, version);
          // Before: mode "form" went to every client, a member its version does not define.
          assert.deepEqual(Object.keys(ask.params as Rec).sort(), members, version);
          await facade.send({ jsonrpc: "2.0", id: ask.id, result: { action: "decline" } });
          const answer = await facade.response(2);
          assert.equal(((answer.result as Rec).structuredContent as Rec).code, -32011);
        } finally {
          await facade.stop();
        }
      }
      assert.equal(existsSync(w.victim), true, "nothing ran");
    }),
);
