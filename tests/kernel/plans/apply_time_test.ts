/**
 * What the human approved is what runs: `plan.apply` judges the plan as it is when its run
 * starts, not as it was when the human decided or when the apply began.
 */
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { kernelTest, startKernelWithPolicy } from "../../_support/kernel.ts";
import { createToken, writePolicy } from "../../_support/principals.ts";
import type { Rec } from "../../_support/rec.ts";
import { rpcError } from "../../_support/rejection.ts";
import { delay } from "../../_support/wait.ts";

/** May do anything on the filesystem, but every run needs the human's approval. */
const ASKS = {
  fs: { read: ["/**"], write: ["/**"], delete: ["/**"] },
  proc_spawn: ["*"],
  session_write: true,
  auto_apply: "never",
  opaque: "ask",
};

kernelTest(
  "K-PLAN-3/K-CAP-1 an approved plan whose effects the policy now denies is refused -32010 blocked, not run: the human took the grant back after approving (an approval lifts approval_required, never a deny)",
  async (k) => {
    const victim = `${k.box.dir}/victim`;
    await Deno.writeTextFile(victim, "kept");
    const agent = await k.attach("default", (await createToken(k.box, "agent:a")).secret);
    const human = await k.attach();
    const plan = await agent.request("exec", { src: `rm ${victim}`, mode: "plan" }) as Rec;
    await human.request("approval.grant", { plan_ref: plan.plan_ref });

    await writePolicy(k.box, { "agent:a": { ...ASKS, fs: { read: ["/**"], write: ["/**"] } } });
    const fresh = await rpcError(agent.request("exec", { src: `rm ${victim}` }));
    assert.equal(fresh.code, -32010, "the same source run now is denied");
    const applied = await rpcError(agent.request("plan.apply", { plan_ref: plan.plan_ref }));
    assert.equal(applied.code, -32010, applied.message);
    assert.equal((applied.data as Rec).reason, "blocked");
    const approved = await rpcError(
      agent.request("exec", { src: `rm ${victim}`, mode: "approved", plan_ref: plan.plan_ref }),
    );
    assert.equal(approved.code, -32010, approved.message);
    const asked = await rpcError(agent.request("cap.request", { plan_ref: plan.plan_ref }));
    assert.equal(asked.code, -32010, asked.message);
    assert.equal((asked.data as Rec).reason, "blocked");
    assert.equal(existsSync(victim), true);
    assert.deepEqual(await human.request("journal.query", { principal: "agent:a" }), []);
  },
  () => startKernelWithPolicy({ "agent:a": ASKS }),
);

kernelTest(
  "K-PLAN-3 a deny answered while a plan.apply is still deriving the plan's effects stops that apply: it ran after the human was told denied, and its journal row said no one approved it",
  async (k) => {
    const ran = `${k.box.dir}/ran`;
    const agent = await k.attach("default", (await createToken(k.box, "agent:a")).secret);
    const human = await k.attach();
    // A long source: its effects are derived off the event loop, long after the deny is answered.
    const src = `touch ${ran}; exit 0\n${"true\n".repeat(50_000)}`;
    const plan = await agent.request("exec", { src, mode: "plan" }) as Rec;
    await human.request("approval.grant", { plan_ref: plan.plan_ref });

    const applying = rpcError(agent.request("plan.apply", { plan_ref: plan.plan_ref }));
    await delay(20);
    const denied = await human.request("approval.deny", { plan_ref: plan.plan_ref }) as Rec;
    assert.equal(denied.grant, "denied");
    const refused = await applying;
    assert.equal(refused.code, -32010, refused.message);
    assert.equal((refused.data as Rec).reason, "denied");
    assert.equal(existsSync(ran), false);
    assert.deepEqual(await human.request("journal.query", { principal: "agent:a" }), []);
  },
  () => startKernelWithPolicy({ "agent:a": ASKS }),
);

kernelTest(
  "P-PLAN-2/K-PLAN-3 an approved plan runs only in the cwd it was planned and shown in: after a cd its unchanged effects (bash script.sh is opaque) ran another directory's script.sh, stale_plan now",
  async (k) => {
    const safe = `${k.box.dir}/safe`;
    const own = `${k.box.dir}/own`;
    for (const [dir, word] of [[safe, "SAFE"], [own, "OWN"]]) {
      await Deno.mkdir(dir);
      await Deno.writeTextFile(`${dir}/script.sh`, `echo ${word}\n`);
    }
    const agent = await k.attach("default", (await createToken(k.box, "agent:a")).secret);
    const human = await k.attach();
    await agent.request("exec", { src: `cd ${safe}` });
    const plan = await agent.request("exec", { src: "bash script.sh", mode: "plan" }) as Rec;
    const shown = (await human.request("approval.list", {}) as { requests: Rec[] }).requests[0];
    assert.deepEqual(shown.cwd, { display: safe }, "the human approves it in safe");
    await human.request("approval.grant", { plan_ref: plan.plan_ref });

    await agent.request("exec", { src: `cd ${own}` });
    const stale = await rpcError(agent.request("plan.apply", { plan_ref: plan.plan_ref }));
    assert.equal(stale.code, -32010, stale.message);
    assert.equal((stale.data as Rec).reason, "stale_plan");
    const approved = await rpcError(
      agent.request("exec", { src: "bash script.sh", mode: "approved", plan_ref: plan.plan_ref }),
    );
    assert.equal(approved.code, -32010, approved.message);

    await agent.request("exec", { src: `cd ${safe}` });
    const run = await agent.request("plan.apply", {
      plan_ref: plan.plan_ref,
      position: "value",
    }) as Rec;
    assert.equal(((run.value as Rec).out as Rec).v, "SAFE\n");
  },
  () =>
    startKernelWithPolicy({
      "agent:a": {
        ...ASKS,
        fs: { read: ["/**"], write: ["~/**"], delete: ["~/**"] },
        auto_apply: "in-grant",
      },
    }),
);

kernelTest(
  "P-PLAN-2/V-TAG-3 a plan is bound to its cwd's bytes: two directories whose names are not UTF-8 show the same text (U+FFFD) but are not the same cwd, and plan.get and approvals give the cwd's raw bytes",
  async (k) => {
    const human = await k.attach();
    await human.request("exec", {
      src: `cd ${k.box.dir} && mkdir $'\\xff' $'\\xfe' && echo 'echo SAFE' > $'\\xff'/script.sh ` +
        `&& echo 'echo OTHER' > $'\\xfe'/script.sh`,
    });
    const agent = await k.attach("default", (await createToken(k.box, "agent:a")).secret);
    await agent.request("exec", { src: `cd ${k.box.dir}/$'\\xff'` });
    const plan = await agent.request("exec", { src: "bash script.sh", mode: "plan" }) as Rec;
    const raw = btoa(`${k.box.dir}/\xff`);
    assert.equal(((await agent.request("plan.get", plan) as Rec).cwd as Rec).raw, raw);
    const shown = (await human.request("approval.list", {}) as { requests: Rec[] }).requests[0];
    assert.equal((shown.cwd as Rec).raw, raw);
    await human.request("approval.grant", { plan_ref: plan.plan_ref });

    await agent.request("exec", { src: `cd ${k.box.dir}/$'\\xfe'` });
    const stale = await rpcError(agent.request("plan.apply", { plan_ref: plan.plan_ref }));
    assert.equal(stale.code, -32010, stale.message);
    assert.equal((stale.data as Rec).reason, "stale_plan");
  },
  () => startKernelWithPolicy({ "agent:a": { ...ASKS, auto_apply: "in-grant" } }),
);

kernelTest(
  "P-PLAN-2/K-PLAN-3 an approved plan runs only in the directory it was made in, not one its cwd's path leads to after the agent swapped that directory for a symlink (it may move entries of the parent but not write the directory's files)",
  async (k) => {
    const home = `${k.box.dir}/home`;
    for (const [dir, word] of [["safe", "SAFE"], ["own", "OWN"]]) {
      await Deno.mkdir(`${home}/${dir}`);
      await Deno.writeTextFile(`${home}/${dir}/script.sh`, `echo ${word}\n`);
    }
    const agent = await k.attach("default", (await createToken(k.box, "agent:a")).secret);
    const human = await k.attach();
    await agent.request("exec", { src: `cd ${home}/safe` });
    const plan = await agent.request("exec", { src: "bash script.sh", mode: "plan" }) as Rec;
    await human.request("approval.grant", { plan_ref: plan.plan_ref });

    for (const src of [`cd ${home} && mv safe old`, `ln -s ${home}/own safe`, `cd ${home}/safe`]) {
      await agent.request("exec", { src });
    }
    const stale = await rpcError(agent.request("plan.apply", { plan_ref: plan.plan_ref }));
    assert.equal(stale.code, -32010, stale.message);
    assert.equal((stale.data as Rec).reason, "stale_plan");
  },
  () =>
    startKernelWithPolicy({
      "agent:a": {
        ...ASKS,
        fs: { read: ["/**"], write: ["~/*", "~/own/**"], delete: ["~/*"] },
        auto_apply: "in-grant",
      },
    }),
);

Deno.test({
  name:
    "K-PLAN-3 an approved opaque plan runs the program the human approved, not one a PATH set after approval leads to [ignored: defect found by the probe round; needs a SPEC decision: a plan binds src, cwd and effects (P-PLAN-2), not the session environment, and an opaque command keeps its first reason (K-EFF-4), so `bash script.sh` approved and then `export PATH=DIR:$PATH` derive the same effects and the apply runs DIR/bash]",
  ignore: true,
  fn: async () => {
    const k = await startKernelWithPolicy({
      "agent:a": { ...ASKS, env_read: ["*"], env_write: ["*"], auto_apply: "in-grant" },
    });
    try {
      const own = `${k.box.dir}/own`;
      await Deno.mkdir(own);
      await Deno.writeTextFile(`${own}/bash`, "#!/bin/sh\necho OWN\n", { mode: 0o755 });
      await Deno.writeTextFile(`${k.box.dir}/script.sh`, "echo SAFE\n");
      const agent = await k.attach("default", (await createToken(k.box, "agent:a")).secret);
      const human = await k.attach();
      const plan = await agent.request("exec", { src: "bash script.sh", mode: "plan" }) as Rec;
      await human.request("approval.grant", { plan_ref: plan.plan_ref });
      await agent.request("exec", { src: `export PATH=${own}:$PATH` });
      const applied = await agent.request("plan.apply", {
        plan_ref: plan.plan_ref,
        position: "value",
      }).then((r) => ((r as Rec).value as Rec).out as Rec, (e) => e);
      assert.notDeepEqual(applied, { $: "str", v: "OWN\n" }, "the agent's bash ran");
    } finally {
      await k.cleanup();
    }
  },
});

Deno.test({
  name:
    "P-PLAN-2/K-PLAN-3 an approved plan runs the code the human approved, not a session function, shell variable or script the agent rewrote after the approval [ignored: defect found by the probe round; needs a SPEC decision: a plan binds src, cwd and effects (P-PLAN-2), and `deploy` (a session function: opaque 'session function'), `eval echo $T` (a shell variable: opaque 'eval') and `./deploy.sh` (bin_hash null unless the policy names hashes, K-EFF-3) derive the same effects after `deploy() { echo EVIL; }`, `T=EVIL` or an edit of deploy.sh, so the apply ran EVIL each time; binding the session's functions, variables and the spawned files' hashes to the plan (stale_plan when they change), or showing them to the approver, is the SPEC's choice]",
  ignore: true,
  fn: async () => {
    const k = await startKernelWithPolicy({
      "agent:a": { ...ASKS, env_read: ["*"], env_write: ["*"], auto_apply: "in-grant" },
    });
    try {
      const agent = await k.attach("default", (await createToken(k.box, "agent:a")).secret);
      const human = await k.attach();
      await Deno.writeTextFile(`${k.box.dir}/deploy.sh`, "#!/bin/sh\necho safe\n", { mode: 0o755 });
      await agent.request("exec", { src: `cd ${k.box.dir}; deploy() { echo safe; }; T=safe` });
      const cases = [
        ["deploy", "deploy() { echo EVIL; }"],
        ["eval echo $T", "T=EVIL"],
        ["./deploy.sh", "echo 'echo EVIL' > deploy.sh"],
      ];
      for (const [src, rewrite] of cases) {
        const plan = await agent.request("exec", { src, mode: "plan" }) as Rec;
        assert.equal(plan.verdict, "approval_required", src);
        await human.request("approval.grant", { plan_ref: plan.plan_ref });
        await agent.request("exec", { src: rewrite });
        const out = await agent.request("plan.apply", {
          plan_ref: plan.plan_ref,
          position: "value",
        })
          .then((r) => JSON.stringify(((r as Rec).value as Rec).out), (e) => String(e));
        assert.equal(out.includes("EVIL"), false, `${src} after ${rewrite}: ${out}`);
      }
    } finally {
      await k.cleanup();
    }
  },
});

Deno.test({
  name:
    "P-PLAN-4/K-CAP-1 a plan the agent approved itself under self_approve is not run after the human took self_approve away [ignored: defect found by the probe round; needs a SPEC decision: a self-approval is recorded as any approval (approved_by the agent) and K-PLAN-3 keeps an approval valid for repeated applies, so plans an agent self-approved while it could (any number, stored in advance) stay runnable once the policy says it may not; re-checking self-approvals against the policy in force, as a deny already is, is the SPEC's choice]",
  ignore: true,
  fn: async () => {
    const k = await startKernelWithPolicy({ "agent:a": { ...ASKS, self_approve: ["*"] } });
    try {
      const victim = `${k.box.dir}/victim`;
      await Deno.writeTextFile(victim, "kept");
      const agent = await k.attach("default", (await createToken(k.box, "agent:a")).secret);
      const plan = await agent.request("exec", { src: `rm ${victim}`, mode: "plan" }) as Rec;
      const asked = await agent.request("cap.request", { plan_ref: plan.plan_ref }) as Rec;
      assert.equal(asked.grant, "approved");
      assert.equal(asked.approved_by, "agent:a");

      await writePolicy(k.box, { "agent:a": ASKS });
      const fresh = await rpcError(agent.request("exec", { src: `rm ${victim}` }));
      assert.equal(fresh.code, -32011, "the same source run now needs the human");
      const applied = await rpcError(agent.request("plan.apply", { plan_ref: plan.plan_ref }));
      assert.equal(applied.code, -32011, applied.message);
      assert.equal(existsSync(victim), true);
    } finally {
      await k.cleanup();
    }
  },
});
