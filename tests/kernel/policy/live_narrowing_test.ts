/**
 * M-ONB-1, P-SBX-2/3: a policy edit reaches the next exec of an agent whose session already has
 * work going on (a warm shell prepared, a resident sandbox running a background task): the run is
 * judged and sandboxed by the edited policy, narrowed or widened, proven by real writes.
 */
import assert from "node:assert/strict";
import { exec } from "../../_support/exec.ts";
import { hostTest, NEEDS_TIER_B } from "../../_support/host.ts";
import { startKernel } from "../../_support/kernel.ts";
import { AGENT_RIGHTS, createToken, writePolicy } from "../../_support/principals.ts";
import type { Rec } from "../../_support/rec.ts";
import { rpcError } from "../../_support/rejection.ts";
import { sandbox } from "../../_support/sandbox.ts";

/** Runs `src` for its value's outcome; an RpcError becomes `{error: code}`. */
async function outcome(conn: Parameters<typeof exec>[0], src: string): Promise<Rec> {
  try {
    return (await exec(conn, src, { position: "value" })).value as Rec;
  } catch (e) {
    const err = e as { code?: number; message?: string; data?: unknown };
    return { error: err.code ?? String(e), message: err.message, data: err.data };
  }
}

hostTest(
  "M-ONB-1, P-SBX-3: an fs.write root taken out of the policy while the agent has a warm shell and a running task is read-only for its next exec (and writable again for the exec after the human gives it back)",
  NEEDS_TIER_B,
  async () => {
    const box = await sandbox();
    const home = `${box.dir}/home`;
    for (const d of ["proj", "other"]) await Deno.mkdir(`${home}/${d}`);
    const entry = (write: string[], extra: Rec = {}) => ({
      ...AGENT_RIGHTS,
      fs: { read: ["~/proj/**", "~/other/**"], write },
      ...extra,
    });
    const wide = entry(["~/proj/**", "~/other/**"], { writable_protected: [".envrc"] });
    const file = await writePolicy(`${box.dir}/leash.jsonc`, { "agent:p": wide });
    const { secret } = await createToken(box, "agent:p", "p");
    const k = await startKernel(["--policy", file], box);
    try {
      await exec(await k.attach("work"), `cd ${home}/proj`);
      const agent = await k.attach("work", secret);
      assert.equal((await outcome(agent, `sh -c 'echo 1 > ${home}/other/a && echo ok'`)).ok, true);
      assert.equal((await outcome(agent, `sh -c 'echo 1 > .envrc && echo ok'`)).ok, true);
      const task = await exec(agent, "sleep 30", { async: true });
      await exec(agent, "echo warm");

      await writePolicy(file, { "agent:p": entry(["~/proj/**"]) });
      const wrote = await outcome(agent, `sh -c 'echo 2 > ${home}/other/b && echo ok'`);
      assert.equal(wrote.ok, false, JSON.stringify(wrote));
      assert.equal(await Deno.stat(`${home}/other/b`).then(() => true, () => false), false);
      const envrc = await outcome(agent, `sh -c 'echo 2 > .envrc && echo ok'`);
      assert.equal(envrc.ok, false, JSON.stringify(envrc));
      assert.equal(await Deno.readTextFile(`${home}/proj/.envrc`), "1\n");
      assert.equal((await rpcError(exec(agent, `touch ${home}/other/c`))).code, -32010);
      assert.equal((await outcome(agent, `sh -c 'echo 2 > ${home}/proj/d && echo ok'`)).ok, true);

      // as at first: a sandbox where a run still going may write ~/other/.envrc (lifted) makes no
      // placeholder under it (sandbox_busy), so the lift comes back too
      await writePolicy(file, { "agent:p": wide });
      const again = await outcome(agent, `sh -c 'echo 3 > ${home}/other/b && echo ok'`);
      assert.equal(again.ok, true, JSON.stringify(again));
      await agent.request("task.cancel", { task: task.task });
    } finally {
      await k.cleanup();
    }
  },
);

hostTest(
  "M-ONB-1, P-SBX-2: an agent the human puts into the sandbox (sandbox false -> true) while it has an unconfined warm shell runs its next exec confined (and unconfined again after the reverse edit)",
  NEEDS_TIER_B,
  async () => {
    const box = await sandbox();
    const home = `${box.dir}/home`;
    await Deno.mkdir(`${home}/proj`);
    await Deno.writeTextFile(`${home}/secret`, "s3cret\n");
    const entry = (sandboxed: boolean) => ({
      ...AGENT_RIGHTS,
      fs: { read: ["~/proj/**"], write: ["~/proj/**"] },
      sandbox: sandboxed,
    });
    const file = await writePolicy(`${box.dir}/leash.jsonc`, { "agent:p": entry(false) });
    const { secret } = await createToken(box, "agent:p", "p");
    const k = await startKernel(["--policy", file], box);
    try {
      await exec(await k.attach("work"), `cd ${home}/proj`);
      const agent = await k.attach("work", secret);
      const free = await outcome(agent, `sh -c 'cat ${home}/secret'`);
      assert.equal((free.out as Rec).v, "s3cret\n", JSON.stringify(free));
      await exec(agent, "echo warm");
      await writePolicy(file, { "agent:p": entry(true) });
      const held = await outcome(agent, `sh -c 'cat ${home}/secret'`);
      assert.equal(held.ok, false, JSON.stringify(held));
      await exec(agent, "echo warm");
      await writePolicy(file, { "agent:p": entry(false) });
      const freed = await outcome(agent, `sh -c 'cat ${home}/secret'`);
      assert.equal((freed.out as Rec).v, "s3cret\n", JSON.stringify(freed));
    } finally {
      await k.cleanup();
    }
  },
);
