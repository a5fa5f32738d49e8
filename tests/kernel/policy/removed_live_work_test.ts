/**
 * What an agent the human removed from the policy (or whose grants were narrowed) keeps of the
 * work it started before: P-PRIN-1 says every verdict for an unknown principal is `deny`, and an
 * exec is refused at once, but nothing says whether a program already running for it keeps
 * taking its input. Ignored until the SPEC decides (the same question as token revocation's,
 * tests/kernel/auth/revoked_live_work_test.ts).
 */
import assert from "node:assert/strict";
import { exec } from "../../_support/exec.ts";
import { startKernelWithPolicy } from "../../_support/kernel.ts";
import { createToken, RUNNER, writePolicy } from "../../_support/principals.ts";
import type { Rec } from "../../_support/rec.ts";
import { rpcError } from "../../_support/rejection.ts";
import { waitUntil } from "../../_support/wait.ts";

Deno.test({
  name:
    "SPEC decision needed (P-PRIN-1 / K-PTY-2 / M-ONB-1): an agent the human removed from the policy keeps typing commands into the bash PTY it opened before (pty.send accepted, the command runs as it), where its exec is refused -32010; this test expects pty.send refused -32010",
  ignore: true,
  fn: async () => {
    const k = await startKernelWithPolicy({ "agent:a": RUNNER });
    try {
      const agent = await k.attach("default", (await createToken(k.box, "agent:a")).secret);
      const pty = await agent.request("pty.open", { cmd: "bash", args: ["--norc"] }) as Rec;
      await writePolicy(k.box, {});
      assert.equal((await rpcError(exec(agent, "echo x"))).code, -32010);
      const mark = `${k.box.dir}/typed`;
      const sent = await agent.request("pty.send", { pty_id: pty.pty_id, input: `touch ${mark}\n` })
        .then(() => null, (e) => e as Rec);
      const typed = await waitUntil(
        () => Deno.stat(mark).then(() => true, () => false),
        2000,
      );
      assert.equal(typed, false, "the removed agent's command ran in its PTY");
      assert.equal(sent?.code, -32010);
    } finally {
      await k.cleanup();
    }
  },
});
