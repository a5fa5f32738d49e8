// M-ELICIT-2 while the human takes their time: the form stays open while the human may also
// answer with `shoal-kernel approve`/`deny` (K-APPR-2/3), and the client may give up on the call
// (M-PROG-3). Real stack: SDK 1.32.2 clients → shoal-mcp → autostarted kernel → bubblewrap → bash.
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
import { hostTest, NEEDS_TIER_B } from "../_support/host.ts";
import { kernelPid } from "../_support/proc.ts";
import { asksInClient, createToken, kernelCli, writePolicy } from "../_support/principals.ts";
import type { Rec } from "../_support/rec.ts";
import { type Sandbox, sandbox } from "../_support/sandbox.ts";
import { connectMcp, type Mcp, mcpError } from "./_mcp.ts";

/** What the human does when the form opens, given the plan it names; then the form's answer. */
type Human = (planRef: string, signal: AbortSignal) => Promise<ElicitResult>;

/**
 * A sandbox holding `agent:e` (asks in client) and a victim file in the human's session cwd;
 * `body` gets a facade for `agent:e` whose client answers each form as `human` does.
 */
async function withAgent(
  human: Human,
  body: (agent: Mcp, victim: string, box: Sandbox) => Promise<void>,
): Promise<void> {
  const box = await sandbox();
  try {
    await writePolicy(`${box.dir}/config/shoal/leash.jsonc`, { "agent:e": asksInClient(box.dir) });
    const env = { XDG_CONFIG_HOME: `${box.dir}/config` };
    const token = (await createToken(box, "agent:e", "e")).secret;
    const local = await connectMcp(box, env);
    try {
      await local.ok("shoal_exec", { src: `cd '${box.dir}'` });
      const victim = `${box.dir}/victim`;
      await Deno.writeTextFile(victim, "x");
      const client = new Client({ name: "shoal-e2e-slow-human", version: "0" }, {
        capabilities: { elicitation: { form: {} } },
      });
      client.setRequestHandler(ElicitRequestSchema, (request, extra) => {
        const planRef = /Plan: (plan:[0-9a-f]{32})/.exec(String(request.params.message))![1];
        return human(planRef, extra.signal);
      });
      const agent = await connectMcp(box, { ...env, SHOAL_TOKEN: token }, client);
      try {
        await body(agent, victim, box);
      } finally {
        await agent.close();
      }
    } finally {
      await local.close();
    }
  } finally {
    await box.cleanup();
  }
}

/** `shoal-kernel <verb> <planRef>` in `box`, which must succeed. */
async function cli(box: Sandbox, verb: "approve" | "deny", planRef: string): Promise<void> {
  const r = await kernelCli(box, [verb, planRef]);
  assert.equal(r.code, 0, r.stderr);
}

hostTest(
  "the human approves with shoal-kernel approve while the form is open, then approves in the form too: the call runs the approved plan and answers its output (M-ELICIT-2 accept + approve → run the approved plan; before: plan.approve via client was refused as not pending and the call answered -32011 'needs approval' for a plan already approved)",
  NEEDS_TIER_B,
  async () => {
    let box: Sandbox | undefined;
    await withAgent(async (planRef) => {
      await cli(box!, "approve", planRef);
      return { action: "accept", content: { decision: "approve" } };
    }, async (agent, victim, b) => {
      box = b;
      const sc = await agent.ok("shoal_exec", { src: `rm '${victim}' && echo removed` });
      assert.deepEqual((sc.value as Rec).out, { $: "str", v: "removed\n" });
      assert.equal(existsSync(victim), false, "the approved command ran");
    });
  },
);

hostTest(
  "the human denies with shoal-kernel deny while the form is open, then denies in the form too: the call answers -32011 with data.decision 'denied' and nothing runs (M-ELICIT-2 accept + deny; before: plan.deny via client was refused as not pending and the call answered without the decision)",
  NEEDS_TIER_B,
  async () => {
    let box: Sandbox | undefined;
    await withAgent(async (planRef) => {
      await cli(box!, "deny", planRef);
      return { action: "accept", content: { decision: "deny" } };
    }, async (agent, victim, b) => {
      box = b;
      const r = await agent.call("shoal_exec", { src: `rm '${victim}'` });
      assert.equal(r.isError, true);
      const error = r.structuredContent as { code: number; data: Rec };
      assert.equal(error.code, -32011);
      assert.equal(error.data.decision, "denied");
      assert.equal(existsSync(victim), true, "nothing ran");
    });
  },
);

hostTest(
  "M-PROG-2/M-ELICIT-2 a call held open for the human's answer keeps its client's progress-reset timeout alive: a human answering after the client's request timeout (the SDK default is 60 s) still gets the approved run (before: nothing was sent on the call's progressToken while the form waited, so a client that resets its timeout on progress, as Claude Code's idle watchdog does, cancelled the call and with it the form)",
  NEEDS_TIER_B,
  () =>
    withAgent(async () => {
      await new Promise((resolve) => setTimeout(resolve, 4000));
      return { action: "accept", content: { decision: "approve" } };
    }, async (agent, victim) => {
      const sc = await agent.ok("shoal_exec", { src: `rm '${victim}' && echo removed` }, {
        timeout: 2000,
        resetTimeoutOnProgress: true,
        onprogress: () => {},
      });
      assert.deepEqual((sc.value as Rec).out, { $: "str", v: "removed\n" });
      assert.equal(existsSync(victim), false, "the approved command ran");
    }),
);

hostTest(
  "M-ELICIT-2 a plan the human approves with shoal-kernel approve while the form stays open runs without waiting for the form: the facade withdraws the form and answers the run (before: the call waited for the form's answer alone, until the client's timeout or the facade's 10 minutes, then answered nothing or -32011 for a plan already approved)",
  NEEDS_TIER_B,
  async () => {
    let box: Sandbox | undefined;
    await withAgent(async (planRef, signal) => {
      await cli(box!, "approve", planRef);
      // The human answered at the terminal; the form stays open until the facade withdraws it.
      await new Promise((resolve) => signal.addEventListener("abort", resolve));
      return { action: "cancel" };
    }, async (agent, victim, b) => {
      box = b;
      const sc = await agent.ok("shoal_exec", { src: `rm '${victim}' && echo removed` }, {
        timeout: 5000,
      });
      assert.deepEqual((sc.value as Rec).out, { $: "str", v: "removed\n" });
      assert.equal(existsSync(victim), false, "the approved command ran");
    });
  },
);

hostTest(
  "M-START-4/M-ELICIT-2 the kernel dying while the form is open fails the call with -32603 kernel disconnected and withdraws the form, and the human's late approve runs nothing (before: the facade's next look at the plan autostarted a new kernel, the form stayed open, and the human's approve was answered with -32011 'needs approval: run shoal-kernel approve plan:…' for a plan the new kernel never had)",
  NEEDS_TIER_B,
  async () => {
    let socket = "";
    let withdrawn = false;
    await withAgent(async (_planRef, signal) => {
      Deno.kill(kernelPid(socket), "SIGKILL");
      // The form stays open until the facade withdraws it, or the human approves after a while.
      await new Promise((resolve) => {
        signal.addEventListener("abort", resolve);
        setTimeout(resolve, 8000);
      });
      withdrawn = signal.aborted;
      return { action: "accept", content: { decision: "approve" } };
    }, async (agent, victim, box) => {
      socket = box.socket();
      const e = await mcpError(agent.call("shoal_exec", { src: `rm '${victim}'` }));
      assert.equal(e.code, -32603);
      assert.match(e.message, /kernel disconnected/);
      assert.equal(withdrawn, true, "the facade withdrew the form");
      assert.equal(existsSync(victim), true, "nothing ran");
    });
  },
);

Deno.test({
  name:
    "M-TASKS-1/M-ELICIT-2 a task-augmented shoal_exec that needs approval answers {task} at once and the human's later approval runs it, so a slow human does not outlast the client's timeout on tools/call [ignored: defect found by the probe round; needs a SPEC decision: M-TASKS-1 answers a task-augmented call 'at once with {task}' but M-ELICIT-2 asks 'during that call', and the facade holds the tools/call open until the human answers; a client past its request timeout cancels it, so the form is withdrawn, no task exists and nothing runs; decide whether such a call answers at once (MCP 2025-11-25 has status input_required for a task waiting on an elicitation)]",
  ignore: true,
  fn: () =>
    withAgent(async () => {
      await new Promise((resolve) => setTimeout(resolve, 4000));
      return { action: "accept", content: { decision: "approve" } };
    }, async (agent, victim) => {
      const created = await agent.client.request(
        {
          method: "tools/call",
          params: {
            name: "shoal_exec",
            arguments: { src: `rm '${victim}' && echo removed` },
            task: {},
          },
        },
        CreateTaskResultSchema,
        { timeout: 2000 },
      );
      const result = await agent.client.request(
        {
          method: "tasks/result",
          params: { taskId: created.task.taskId },
        },
        CallToolResultSchema,
        { timeout: 10_000 },
      );
      const value = (result.structuredContent as Rec).value as Rec;
      assert.deepEqual(value.out, { $: "str", v: "removed\n" });
      assert.equal(existsSync(victim), false, "the approved command ran");
    }),
});

Deno.test({
  name:
    "M-ELICIT-1/M-ELICIT-2 the human who approved with shoal-kernel approve while the form was open and then answers deny in the form has the plan denied, not left approved for the agent to apply [ignored: defect found by the probe round; needs a SPEC decision: M-ELICIT-1 lets plan.deny via client act only on a pending plan, so the form's deny of the plan approved meanwhile was refused and dropped without a word: the call answered -32011 telling the human to run `shoal-kernel approve` (the plan was approved), no data.decision, and the agent's shoal_apply then ran `rm victim`; the CLI's approval.deny takes an approved plan to denied (P-PLAN-4), the client's may not; whether the later deny wins (plan.deny via client also from approved) or the form says it came too late is the SPEC's choice]",
  ignore: true,
  fn: async () => {
    let box: Sandbox | undefined;
    let ref = "";
    await withAgent(async (planRef) => {
      ref = planRef;
      await cli(box!, "approve", planRef);
      return { action: "accept", content: { decision: "deny" } };
    }, async (agent, victim, b) => {
      box = b;
      const r = await agent.call("shoal_exec", { src: `rm '${victim}'` });
      assert.equal(r.isError, true);
      const error = r.structuredContent as { code: number; data: Rec };
      assert.equal(error.data.decision, "denied", "the human's last word in the form is told");
      const applied = await agent.call("shoal_apply", { plan_ref: ref });
      assert.equal(applied.isError, true, "the denied plan is not applied");
      assert.equal(existsSync(victim), true, "nothing ran");
    });
  },
});
