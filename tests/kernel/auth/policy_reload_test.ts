import assert from "node:assert/strict";
import { collectEvents, waitForEvent } from "../../_support/events.ts";
import { kernelTest, startKernelWithPolicy } from "../../_support/kernel.ts";
import { createToken, LOCAL_HUMAN, writePolicy } from "../../_support/principals.ts";
import type { Rec } from "../../_support/rec.ts";
import { rpcError } from "../../_support/rejection.ts";

const AGENT = { proc_spawn: ["*"], auto_apply: "in-grant" };
/** What the human first granted agent:a, and took back by editing the policy. */
const TRUSTED = { ...AGENT, fs: { read: ["~/**"] }, journal_read: true, approver: true };

kernelTest(
  "M-ONB-1, T-TOK-4: a connection attached before the human edits the policy acts under the edited policy, for requests and pushes alike (a removed agent's open connection kept exec, every journal row and event, and approving)",
  async (k) => {
    const a = await createToken(k.box, "agent:a");
    const human = await k.attach();
    const agent = await k.attach("default", a.secret);
    const pushed = collectEvents(agent);
    await agent.request("events.subscribe", { channel: "journal" });
    await agent.request("exec", { src: "echo before" });
    const home = `${k.box.dir}/home`;
    await Deno.writeTextFile(`${home}/listed.txt`, "");
    const completion = { src: `cat ${home}/list` };
    const listed = await agent.request("complete", completion) as Rec;
    assert.deepEqual(listed.candidates, [`${home}/listed.txt`]);
    await human.request("exec", { src: "echo first" });
    await waitForEvent(pushed, (e) => (e.payload as Rec).principal === LOCAL_HUMAN);

    // The human narrows agent:a (no journal_read, no approver), then removes it altogether.
    await writePolicy(k.box, { "agent:a": AGENT });
    assert.deepEqual((await agent.request("complete", completion) as Rec).candidates, []);
    const rows = await agent.request("journal.query", {}) as Rec[];
    assert.deepEqual(rows.map((r) => r.principal), ["agent:a"]);
    const denied = await rpcError(agent.request("journal.query", { principal: LOCAL_HUMAN }));
    assert.equal(denied.code, -32010);
    const plan = await human.request("exec", { src: "rm -rf /nothing", mode: "plan" }) as Rec;
    const grant = await rpcError(agent.request("approval.grant", { plan_ref: plan.plan_ref }));
    assert.equal(grant.code, -32010);
    const seen = pushed.length;
    await human.request("exec", { src: "echo second" });
    const own = await agent.request("exec", { src: "echo own" }) as Rec;
    await waitForEvent(
      pushed,
      (e) => (e.payload as Rec).principal === "agent:a" && pushed.indexOf(e) >= seen,
    );
    assert.deepEqual(
      pushed.slice(seen).map((e) => (e.payload as Rec).principal),
      ["agent:a"],
      "the human's second row is not pushed to an agent without journal_read",
    );
    assert.equal(own.render, "own");

    await writePolicy(k.box, {});
    const refused = await rpcError(agent.request("exec", { src: "echo after" }));
    assert.equal(refused.code, -32010);
    const fresh = await k.attach("default", a.secret);
    assert.equal((await rpcError(fresh.request("exec", { src: "echo after" }))).code, -32010);
  },
  () => startKernelWithPolicy({ "agent:a": TRUSTED }),
);

kernelTest(
  "M-ONB-1: a narrowing that keeps the policy file's size and sets its mtime back (cp -p of a prepared policy, rsync -t, touch -r) reaches the agent's next exec: the kernel's (inode, size, mtime) stamp missed it and the removed grant kept working",
  async (k) => {
    const file = `${k.box.dir}/leash.jsonc`;
    const agent = await k.attach("default", (await createToken(k.box, "agent:a")).secret);
    assert.equal(typeof (await agent.request("exec", { src: "id" }) as Rec).render, "string");
    const before = await Deno.stat(file);
    await writePolicy(file, { "agent:a": { ...AGENT, proc_spawn: ["ls"] } });
    await Deno.utime(file, before.atime!, before.mtime!);
    assert.equal((await Deno.stat(file)).size, before.size);
    assert.equal((await rpcError(agent.request("exec", { src: "id" }))).code, -32010);
  },
  () => startKernelWithPolicy({ "agent:a": { ...AGENT, proc_spawn: ["id"] } }),
);
