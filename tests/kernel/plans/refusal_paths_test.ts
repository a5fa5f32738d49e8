/**
 * What a refusal or a plan tells an agent about a path it reached through a symlink (-32010
 * message and data, `missing`, `explain`, its plans): where a link leads outside what the agent may read is not told,
 * the path as the agent wrote it is; a target it may read is named as before (the grant to add).
 */
import assert from "node:assert/strict";
import { exec } from "../../_support/exec.ts";
import { startKernelWithAgent } from "../../_support/kernel.ts";
import { AGENT_RIGHTS } from "../../_support/principals.ts";
import type { Rec } from "../../_support/rec.ts";
import { rpcError } from "../../_support/rejection.ts";

Deno.test("a refusal of a path reached through a symlink out of the agent's grants shows the path as the agent wrote it, never where the link leads; a target the agent may read is named", async () => {
  const { kernel: k, token } = await startKernelWithAgent("agent:r", {
    ...AGENT_RIGHTS,
    fs: { read: ["~/proj/**", "~/docs/**"], write: ["~/proj/**"] },
  });
  try {
    const home = `${k.box.dir}/home`;
    const proj = `${home}/proj`;
    // two hops: the first (readlink in the project) says `~/outside/a`, the second is unknown
    await Deno.mkdir(`${home}/hidden/target`, { recursive: true });
    await Deno.mkdir(`${home}/outside`);
    await Deno.mkdir(`${home}/docs`);
    await Deno.mkdir(proj);
    await Deno.symlink(`${home}/hidden/target`, `${home}/outside/a`);
    await Deno.symlink(`${home}/outside/a`, `${proj}/link`);
    await Deno.symlink(`${home}/docs`, `${proj}/docs`);
    const human = await k.attach("work");
    await exec(human, `cd ${proj}`);
    const agent = await k.attach("work", token);

    const denied = await rpcError(exec(agent, "cat link/f"));
    assert.equal(denied.code, -32010);
    const told = `${denied.message}\n${JSON.stringify(denied.data)}`;
    assert.doesNotMatch(told, /hidden/, told);
    assert.deepEqual((denied.data as Rec).missing, [`fs.read ${JSON.stringify(`${proj}/link/f`)}`]);
    assert.deepEqual(
      ((denied.data as Rec).effects as Rec[]).find((e) => e.kind === "fs_read"),
      { kind: "fs_read", paths: [`${proj}/link/f`] },
    );
    assert.match(denied.message, /lacks fs\.read ".*\/proj\/link\/f"/);

    const explained = await agent.request("explain", { src: "cat link/f" }) as Rec;
    assert.doesNotMatch(JSON.stringify(explained.effects), /hidden/);

    // a target it may read: the grant to add names it
    const write = await rpcError(exec(agent, "touch docs/x"));
    assert.deepEqual((write.data as Rec).missing, [`fs.write ${JSON.stringify(`${home}/docs/x`)}`]);

    // the human's own refusals and explanations are unchanged: it may read everything
    const own = await human.request("explain", { src: "cat link/f" }) as Rec;
    assert.match(JSON.stringify(own.effects), /hidden\/target\/f/);
  } finally {
    await k.cleanup();
  }
});

Deno.test("a plan of a path reached through a symlink out of the agent's grants shows it as the agent wrote it: mode plan, plan.get, plan.list and a stale apply tell no more than a refusal", async () => {
  const { kernel: k, token } = await startKernelWithAgent("agent:r", {
    ...AGENT_RIGHTS,
    fs: { read: ["~/proj/**"], write: ["~/proj/**"] },
  });
  try {
    const home = `${k.box.dir}/home`;
    const proj = `${home}/proj`;
    await Deno.mkdir(`${home}/hidden/target`, { recursive: true });
    await Deno.mkdir(`${home}/outside`);
    await Deno.mkdir(`${proj}/dir`, { recursive: true });
    await Deno.symlink(`${home}/hidden/target`, `${home}/outside/a`);
    await Deno.symlink(`${home}/outside/a`, `${proj}/link`);
    const human = await k.attach("work");
    await exec(human, `cd ${proj}`);
    const agent = await k.attach("work", token);
    const quiet = (what: string, value: unknown) =>
      assert.doesNotMatch(JSON.stringify(value), /hidden/, `${what}: ${JSON.stringify(value)}`);

    const blocked = await exec(agent, "cat link/f", { mode: "plan" });
    quiet("mode plan", blocked);
    assert.deepEqual((blocked.effects as Rec[])[0], { kind: "fs_read", paths: [`${proj}/link/f`] });
    quiet("plan.get", await agent.request("plan.get", { plan_ref: blocked.plan_ref }));
    quiet("plan.list", await agent.request("plan.list", {}));

    // planned in grant; by apply `dir` leads where `link` does
    const later = await exec(agent, "cat dir/f", { mode: "plan" });
    assert.equal(later.verdict, "allow");
    await Deno.remove(`${proj}/dir`);
    await Deno.symlink(`${home}/outside/a`, `${proj}/dir`);
    const stale = await rpcError(agent.request("plan.apply", { plan_ref: later.plan_ref }));
    assert.equal((stale.data as Rec).reason, "stale_plan");
    quiet("stale_plan", stale.data);
    assert.deepEqual(((stale.data as Rec).effects as Rec[])[0], {
      kind: "fs_read",
      paths: [`${proj}/dir/f`],
    });

    // the human's own plans are unchanged: it may read everything
    const own = await exec(human, "cat link/f", { mode: "plan" });
    assert.match(JSON.stringify(own.effects), /hidden\/target\/f/);
  } finally {
    await k.cleanup();
  }
});

Deno.test("a plan awaiting approval shows where its paths lead, even one the agent may write but not read: the human approves the real target, not the agent's link to it", async () => {
  const { kernel: k, token } = await startKernelWithAgent("agent:r", {
    ...AGENT_RIGHTS,
    fs: { read: ["~/proj/**"], write: ["~/proj/**", "~/drop/**"] },
  });
  try {
    const home = `${k.box.dir}/home`;
    const proj = `${home}/proj`;
    await Deno.mkdir(`${home}/drop`, { recursive: true });
    await Deno.mkdir(proj);
    await Deno.symlink(`${home}/drop`, `${proj}/out`);
    const human = await k.attach("work");
    await exec(human, `cd ${proj}`);
    const agent = await k.attach("work", token);
    const real = { kind: "fs_write", paths: [`${home}/drop/.bashrc`] };
    const asked = await rpcError(exec(agent, "echo x > out/.bashrc"));
    assert.equal(asked.code, -32011);
    assert.deepEqual(((asked.data as Rec).effects as Rec[])[0], real);
    const ref = (asked.data as Rec).plan_ref;
    // what the approval form in the client is built from
    const plan = await agent.request("plan.get", { plan_ref: ref }) as Rec;
    assert.deepEqual((plan.effects as Rec[])[0], real);
    const planned = await exec(agent, "echo x > out/.bashrc", { mode: "plan" });
    assert.deepEqual((planned.effects as Rec[])[0], real);
    const listed = await agent.request("approval.list", {}) as Rec;
    assert.deepEqual(((listed.requests as Rec[])[0].effects as Rec[])[0], real);
  } finally {
    await k.cleanup();
  }
});
