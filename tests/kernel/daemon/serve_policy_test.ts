import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { kernelUntilExit, startKernel } from "../../_support/kernel.ts";
import { createToken } from "../../_support/principals.ts";
import type { Rec } from "../../_support/rec.ts";
import { rpcError } from "../../_support/rejection.ts";
import { type Sandbox, sandbox } from "../../_support/sandbox.ts";

/** Runs the kernel with `args` until it exits; returns its status and stderr. */
function failedStart(box: Sandbox, args: string[]): Promise<{ code: number; stderr: string }> {
  return kernelUntilExit(box, ["--socket", box.socket(), ...args]);
}

Deno.test("a missing or malformed explicit --policy stops the kernel with exit 1 and a message naming the file (G-STATE-3, P-POL-2)", async () => {
  const box = await sandbox();
  try {
    const cases: [string, string | null, RegExp][] = [
      ["missing.jsonc", null, /cannot read/],
      ["syntax.jsonc", '{"principal": {"agent:a": {"fs.read": ["/**"]', /malformed JSONC/],
      ["type.jsonc", '{"principal": {"agent:a": {"journal_read": "yes"}}}', /must be a boolean/],
      ["field.jsonc", '{"principal": {"agent:a": {"fs_reed": []}}}', /unknown field "fs_reed"/],
      [
        "twice.jsonc",
        '{"principal": {"agent:a": {"fs.read": [], "fs": {"read": []}}}}',
        /given twice/,
      ],
    ];
    for (const [name, text, why] of cases) {
      const path = `${box.dir}/${name}`;
      if (text !== null) await Deno.writeTextFile(path, text);
      const r = await failedStart(box, ["--policy", path]);
      assert.equal(r.code, 1, `${name}: ${r.stderr}`);
      assert.ok(r.stderr.includes(path), r.stderr);
      assert.match(r.stderr, why);
      assert.doesNotMatch(r.stderr, /ready/);
      assert.equal(existsSync(box.socket()), false);
    }
    // A malformed discovered leash.jsonc is fatal too; an absent one means the default policy.
    await Deno.mkdir(`${box.dir}/home/.config/shoal`, { recursive: true });
    await Deno.writeTextFile(`${box.dir}/home/.config/shoal/leash.jsonc`, "{,}");
    const discovered = await failedStart(box, []);
    assert.equal(discovered.code, 1);
    assert.match(discovered.stderr, /leash\.jsonc/);
  } finally {
    await box.cleanup();
  }
});

Deno.test("a discovered leash.jsonc is loaded: its agent runs, principals it does not list are denied (G-STATE-3, P-PRIN-1)", async () => {
  const box = await sandbox();
  await Deno.mkdir(`${box.dir}/home/.config/shoal`, { recursive: true });
  await Deno.writeTextFile(
    `${box.dir}/home/.config/shoal/leash.jsonc`,
    // "sandbox": false: this test is about discovery; the sandbox has tests/kernel/sandbox/
    '{ "principal": { "agent:known": { "spawn": ["echo", "true"], "auto_apply": "in-grant", "sandbox": false, }, }, } // ok\n',
  );
  const k = await startKernel([], box);
  try {
    const known = await k.attach("default", (await createToken(box, "agent:known")).secret);
    const stranger = await k.attach("default", (await createToken(box, "agent:stranger")).secret);
    const ran = await known.request("exec", { src: "true" }) as Rec;
    assert.equal((ran.value as Rec).ok, true);
    const e = await rpcError(stranger.request("exec", { src: "true" }));
    assert.equal(e.code, -32010);
    assert.equal((e.data as Rec).verdict, "deny");
    const planned = await stranger.request("exec", { src: "true", mode: "plan" }) as Rec;
    assert.equal(planned.approval, "blocked");
    assert.equal(
      (await rpcError(stranger.request("cap.request", { plan_ref: planned.plan_ref }))).code,
      -32010,
    );
    const human = await k.attach();
    const blocked = await rpcError(human.request("approval.grant", { plan_ref: planned.plan_ref }));
    assert.equal(blocked.code, -32010);
    const caps = (await stranger.request("session.attach", {
      token: (await createToken(box, "agent:stranger")).secret,
    }) as Rec).caps as Rec;
    assert.equal(caps.opaque, "deny");
    assert.equal(caps.approver, false);
    assert.equal(caps.journal_read, false);
  } finally {
    await k.cleanup();
  }
});
