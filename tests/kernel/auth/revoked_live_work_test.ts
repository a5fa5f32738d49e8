import assert from "node:assert/strict";
import { startKernelWithPolicy, type TestKernel } from "../../_support/kernel.ts";
import { createToken, kernelCli } from "../../_support/principals.ts";
import { processLive } from "../../_support/proc.ts";
import type { Rec } from "../../_support/rec.ts";
import { rpcError } from "../../_support/rejection.ts";
import { waitUntil } from "../../_support/wait.ts";

// What `token revoke` does to the work its agent left running: T-TOK-4 says only that the
// connection's requests fail -32030 and its subscriptions stop. These tests state one answer;
// they are ignored until the SPEC decides.

/** An ignored `Deno.test` of `body` against a kernel whose policy knows `agent:a` as `policy`. */
function undecided(name: string, policy: Rec, body: (k: TestKernel) => Promise<void>): void {
  Deno.test({
    name,
    ignore: true,
    fn: async () => {
      const k = await startKernelWithPolicy({ "agent:a": policy });
      try {
        await body(k);
      } finally {
        await k.cleanup();
      }
    },
  });
}

undecided(
  "SPEC decision needed (T-TOK-4 / K-TASK-5 / K-PTY-5): revoking the only token of an agent leaves its background task and PTY program running; this test expects revoke to stop them",
  { proc_spawn: ["*"], auto_apply: "in-grant" },
  async (k) => {
    const a = await createToken(k.box, "agent:a");
    const human = await k.attach();
    const agent = await k.attach("default", a.secret);
    const { task } = await agent.request("exec", { src: "sleep 300", async: true }) as Rec;
    const taskPid = (await agent.request("task.get", { task }) as Rec).pid as number;
    const pty = await agent.request("pty.open", { cmd: "sleep", args: ["301"] }) as Rec;
    try {
      assert.equal((await kernelCli(k.box, ["token", "revoke", a.id])).code, 0);
      assert.equal((await rpcError(agent.request("task.list", {}))).code, -32030);
      // Today both go on: the human sees them running, as long as nobody cancels them.
      const gone = await waitUntil(
        () => !processLive(taskPid) && !processLive(pty.pid as number),
        5000,
      );
      assert.ok(gone, "the revoked agent's task and PTY program still run");
      const rec = await human.request("task.get", { task }) as Rec;
      assert.equal(rec.state, "cancelled");
    } finally {
      for (const pid of [taskPid, pty.pid as number]) {
        try {
          Deno.kill(-pid, "SIGKILL");
        } catch {
          // gone
        }
      }
    }
  },
);

undecided(
  "SPEC decision needed (T-TOK-4 / P-PLAN-2 / K-APPR-4): a plan whose token was revoked stays in approval.list, can be approved afterwards, and a new token of the same principal applies it; this test expects revoke to retire the token's pending plans",
  { proc_spawn: ["*"], auto_apply: "never" },
  async (k) => {
    const a = await createToken(k.box, "agent:a");
    const agent = await k.attach("default", a.secret);
    const refused = await rpcError(agent.request("exec", { src: "sleep 0" }));
    assert.equal(refused.code, -32011);
    const planRef = (refused.data as Rec).plan_ref as string;
    await agent.request("cap.request", { plan_ref: planRef });
    assert.equal((await kernelCli(k.box, ["token", "revoke", a.id])).code, 0);

    // Today the human is still asked about the revoked agent's command …
    const listed = await kernelCli(k.box, ["approvals"]);
    assert.ok(!listed.stdout.includes(planRef), "the revoked token's request is still listed");
    // … may approve it, and whoever holds a new token of agent:a runs it.
    const approved = await kernelCli(k.box, ["approve", planRef]);
    assert.notEqual(approved.code, 0, "a plan of a revoked token was approved");
    const b = await createToken(k.box, "agent:a");
    const successor = await k.attach("default", b.secret);
    const applied = await rpcError(successor.request("plan.apply", { plan_ref: planRef }));
    assert.equal(applied.code, -32012);
  },
);

undecided(
  "SPEC decision needed (T-TOK-4 / K-TASK-4): a task.await sent before token revoke still answers after it with the output the task wrote after the revoke, where the connection's pushes stop; this test expects -32030",
  { proc_spawn: ["*"], auto_apply: "in-grant" },
  async (k) => {
    const a = await createToken(k.box, "agent:a");
    const agent = await k.attach("default", a.secret);
    const { task } = await agent.request("exec", {
      src: "sleep 2; echo written-after-revoke",
      async: true,
    }) as Rec;
    const waiting = agent.request("task.await", { task }).then(
      (r) => ({ result: r as Rec }),
      (e) => ({ code: (e as { code?: number }).code }),
    );
    assert.equal((await kernelCli(k.box, ["token", "revoke", a.id])).code, 0);
    const answer = await waiting;
    assert.ok(!("result" in answer), "the revoked connection got the task's result");
    assert.equal(answer.code, -32030);
  },
);
