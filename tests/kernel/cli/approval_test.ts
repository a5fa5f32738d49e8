import assert from "node:assert/strict";
import { kernelTest, startKernelWithPolicy, type TestKernel } from "../../_support/kernel.ts";
import { createToken, kernelCli, LOCAL_HUMAN } from "../../_support/principals.ts";
import type { Rec } from "../../_support/rec.ts";
import { rpcError } from "../../_support/rejection.ts";

const AGENT = { fs: { write: ["/**"] }, proc_spawn: ["*"], auto_apply: "never" };

/** A kernel with `policy` and an attached `agent:a`; its socket is the default-discovered one. */
function withAgent(
  name: string,
  policy: Record<string, Rec>,
  body: (k: TestKernel, agent: Awaited<ReturnType<TestKernel["attach"]>>) => Promise<void>,
) {
  kernelTest(
    name,
    async (k) =>
      await body(k, await k.attach("default", (await createToken(k.box, "agent:a")).secret)),
    () => startKernelWithPolicy(policy),
  );
}

async function pendingPlan(agent: Awaited<ReturnType<TestKernel["attach"]>>, src: string) {
  return (await rpcError(agent.request("exec", { src }))).data as Rec;
}

withAgent(
  "approvals, approve and deny find the kernel by G-SOCK-1 discovery and print one compact JSON line (K-CLI-3)",
  { "agent:a": AGENT },
  async (k, agent) => {
    const one = await pendingPlan(agent, "touch one");
    const two = await pendingPlan(agent, "touch two");
    const listed = await kernelCli(k.box, ["approvals"]);
    assert.equal(listed.code, 0, listed.stderr);
    assert.equal(listed.stdout.split("\n").length, 2);
    assert.equal(listed.stdout, JSON.stringify(JSON.parse(listed.stdout)) + "\n");
    const requests = JSON.parse(listed.stdout).requests as Rec[];
    assert.deepEqual(requests.map((r) => r.plan_ref), [two.plan_ref, one.plan_ref]);
    assert.deepEqual(requests.map((r) => r.approval), ["pending", "pending"]);

    const denied = await kernelCli(k.box, [
      "deny",
      "--session=default",
      two.plan_ref as string,
      "--reason=later",
      `--socket=${k.socket}`,
    ]);
    assert.equal(denied.code, 0, denied.stderr);
    assert.deepEqual(JSON.parse(denied.stdout), {
      grant: "denied",
      plan_ref: two.plan_ref,
      denied_by: LOCAL_HUMAN,
      reason: "later",
    });
    const approved = await kernelCli(k.box, ["approve", one.plan_ref as string]);
    assert.equal(approved.code, 0, approved.stderr);
    assert.equal(JSON.parse(approved.stdout).grant, "approved");
    assert.equal(
      (await agent.request("plan.get", { plan_ref: one.plan_ref }) as Rec).approval,
      "approved",
    );
    assert.equal(
      (await agent.request("plan.get", { plan_ref: two.plan_ref }) as Rec).approval,
      "denied",
    );
    const guessed = await kernelCli(k.box, ["approve", `plan:${"0".repeat(32)}`]);
    assert.equal(guessed.code, 1);
    assert.match(guessed.stderr, /^shoal-kernel: .+ \(-32012\)\n$/);
    const empty = await kernelCli(k.box, ["approvals"]);
    assert.deepEqual(JSON.parse(empty.stdout), { requests: [] });
  },
);

withAgent(
  "-32011's message names the command with which the local human approves the plan, and it does (M-ONB-3, K-CLI-3)",
  { "agent:a": AGENT },
  async (k, agent) => {
    const err = await rpcError(agent.request("exec", { src: "touch named" }));
    const plan = (err.data as Rec).plan_ref as string;
    const named = /`shoal-kernel (approve plan:[0-9a-f]+ [^`]+)`/.exec(err.message);
    assert.ok(named !== null, err.message);
    const approved = await kernelCli(k.box, named[1].split(" "));
    assert.equal(approved.code, 0, approved.stderr);
    assert.equal((await agent.request("plan.get", { plan_ref: plan }) as Rec).approval, "approved");
  },
);

withAgent(
  "-32011's command reaches this kernel also from a terminal whose environment finds another socket (another XDG_RUNTIME_DIR or TMPDIR: an ssh session beside the desktop's client) (M-ONB-3, K-CLI-3)",
  { "agent:a": AGENT },
  async (k, agent) => {
    const err = await rpcError(agent.request("exec", { src: "touch reached" }));
    const plan = (err.data as Rec).plan_ref as string;
    const named = /`shoal-kernel (approve [^`]+)`/.exec(err.message);
    assert.ok(named !== null, err.message);
    await Deno.mkdir(`${k.box.dir}/ssh-tmp`);
    const terminal = { XDG_RUNTIME_DIR: "", TMPDIR: `${k.box.dir}/ssh-tmp` };
    const approved = await kernelCli(k.box, named[1].split(" "), terminal);
    assert.equal(approved.code, 0, approved.stderr);
    assert.equal((await agent.request("plan.get", { plan_ref: plan }) as Rec).approval, "approved");
  },
);

withAgent(
  "CLI errors: kernel errors print the message and code and exit 1, unreachable socket exits 1, bad usage exits 2 (K-CLI-3)",
  { "agent:a": AGENT, [LOCAL_HUMAN]: { approver: false } },
  async (k, agent) => {
    const plan = await pendingPlan(agent, "touch nope");
    const notApprover = await kernelCli(k.box, ["approve", plan.plan_ref as string]);
    assert.equal(notApprover.code, 1);
    assert.match(notApprover.stderr, /^shoal-kernel: .+ \(-32010\)\n$/);
    assert.equal(notApprover.stdout, "");

    const unknown = await kernelCli(k.box, ["deny", `plan:${"0".repeat(32)}`, "--reason", "x"]);
    assert.equal(unknown.code, 1);
    assert.match(unknown.stderr, /\(-32010\)\n$/);

    const away = await kernelCli(k.box, ["approvals", "--socket", `${k.box.dir}/none.sock`]);
    assert.equal(away.code, 1);
    assert.match(away.stderr, /none\.sock/);
    const otherSession = await kernelCli(k.box, ["approvals", "--session", "nobody"]);
    assert.equal(otherSession.code, 1);

    for (
      const args of [
        ["approve"],
        ["approve", "a", "b"],
        ["approvals", "extra"],
        ["approve", "x", "--reason", "no"],
        ["deny", "x", "--reason"],
        ["approvals", "--bogus"],
        ["approvals", "--session", "../x"],
        ["approve", "x", "--session", ""],
        ["approve", "x", "--reason=no"],
        ["approvals", "--session=../x"],
        ["approvals", "--bogus=1"],
      ]
    ) {
      const r = await kernelCli(k.box, args);
      assert.equal(r.code, 2, args.join(" "));
    }
  },
);

withAgent(
  "CLI errors show the plan ref they echo with control characters as \\u escapes: a ref pasted from an agent's message with an OSC 52 sequence in it made `unknown plan: …` on stderr set the terminal's clipboard; an unreachable --socket path the same (K-CLI-3)",
  { "agent:a": AGENT },
  async (k) => {
    const osc = "plan:\x1b]52;c;ZWNobyBwd25lZAo=\x07";
    for (const command of ["approve", "deny"]) {
      const r = await kernelCli(k.box, [command, osc]);
      assert.equal(r.code, 1, r.stderr);
      // deno-lint-ignore no-control-regex
      assert.doesNotMatch(r.stderr, /[\x00-\x09\x0b-\x1f\x7f-\x9f]/, JSON.stringify(r.stderr));
      assert.match(
        r.stderr,
        /unknown plan: plan:\\u001b\]52;c;ZWNobyBwd25lZAo=\\u0007 \(-32012\)\n$/,
      );
    }
    // so does the socket path an agent relays with the command (`--socket PATH`)
    const away = await kernelCli(k.box, ["approvals", "--socket", `${k.box.dir}/\x1b[2Jk.sock`]);
    assert.equal(away.code, 1);
    assert.ok(!away.stderr.includes("\x1b"), JSON.stringify(away.stderr));
    assert.match(away.stderr, /\\u001b\[2Jk\.sock/);
  },
);

withAgent(
  "approvals shows the agent's text with C1 controls, line separators, bidirectional and zero-width characters as \\u escapes, so the human's terminal neither runs nor reorders them (K-CLI-3)",
  { "agent:a": AGENT },
  async (k, agent) => {
    // A right-to-left override shows `txt.olleh` as `hello.txt`; U+009B is an 8-bit CSI.
    const src = "touch ok #\u202e txt.olleh\u202c \u009b2J\u2028\u200b\ufeff\u2066x\u2069";
    await pendingPlan(agent, src);
    const listed = await kernelCli(k.box, ["approvals"]);
    assert.equal(listed.code, 0, listed.stderr);
    assert.doesNotMatch(listed.stdout, /[\x80-\x9f\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff]/);
    assert.match(listed.stdout, /\\u202e txt\.olleh\\u202c \\u009b2J\\u2028\\u200b\\ufeff/);
    assert.equal((JSON.parse(listed.stdout).requests as Rec[])[0].src, src);
  },
);

Deno.test({
  name:
    "K-APPR-4 the human can read the whole source of a plan before approving it: the part past 64 KiB runs too [ignored: defect found by the probe round; needs a SPEC decision: approval.list cuts each src to 65536 bytes (src_truncated) and plan.get answers only the plan's owner (K-PLAN-1), so no approver method shows what an agent put after 64 KiB of padding, e.g. the program an opaque `bash -c` runs; plan.get for approvers, or refusing to approve a truncated plan, is the SPEC's choice]",
  ignore: true,
  fn: async () => {
    const k = await startKernelWithPolicy({ "agent:a": { ...AGENT, opaque: "ask" } });
    try {
      const agent = await k.attach("default", (await createToken(k.box, "agent:a")).secret);
      const src = `# ${"padding ".repeat(9000)}\nbash -c 'echo the part the human never saw'`;
      const plan = await pendingPlan(agent, src);
      const listed = await kernelCli(k.box, ["approvals"]);
      const shown = (JSON.parse(listed.stdout).requests as Rec[])[0];
      assert.equal(shown.src_truncated, true);
      const human = await k.attach();
      const whole = await human.request("plan.get", { plan_ref: plan.plan_ref }) as Rec;
      assert.equal(whole.src, src);
    } finally {
      await k.cleanup();
    }
  },
});

Deno.test({
  name:
    "K-CLI-3 approve shows the human what it approved (the plan's source, cwd and principal) [ignored: needs a SPEC decision: K-CLI-3 prints approval.grant's result alone, {grant, plan_ref, approved_by, enforced}, so a human who runs the `shoal-kernel approve plan:…` that -32011 names (and that an agent relays in its own words) learns nothing of what ran unless they ran `approvals` first and matched the ref; showing the plan (on stderr, or asking on a tty) is the SPEC's choice]",
  ignore: true,
  fn: async () => {
    const k = await startKernelWithPolicy({ "agent:a": AGENT });
    try {
      const agent = await k.attach("default", (await createToken(k.box, "agent:a")).secret);
      const plan = await pendingPlan(agent, "touch not-what-the-agent-said");
      const approved = await kernelCli(k.box, ["approve", plan.plan_ref as string]);
      assert.equal(approved.code, 0, approved.stderr);
      assert.match(approved.stdout + approved.stderr, /touch not-what-the-agent-said/);
      assert.match(approved.stdout + approved.stderr, /agent:a/);
    } finally {
      await k.cleanup();
    }
  },
});
