// The TMPDIR of a sandboxed agent's runs (M-ONB-3, sandbox_tmpdir.ts).
import assert from "node:assert/strict";
import type { RpcConnection } from "../../../src/protocol/rpc_client.ts";
import { exec } from "../../_support/exec.ts";
import { hostTest, NEEDS_TIER_B } from "../../_support/host.ts";
import { startKernel } from "../../_support/kernel.ts";
import { createToken, PROJECT_AGENT, writePolicy } from "../../_support/principals.ts";
import type { Rec } from "../../_support/rec.ts";
import { sandbox } from "../../_support/sandbox.ts";
import { screenWhenDone } from "../../_support/pty_screen.ts";

/** The outcome of `src` run in value position. */
async function run(conn: RpcConnection, src: string): Promise<Rec> {
  return (await exec(conn, src, { position: "value" })).value as Rec;
}

/** The text of an outcome's stdout, its last newline cut. */
function stdout(outcome: Rec): string {
  const out = outcome.out as Rec;
  return String(out.v ?? "").replace(/\n$/, "");
}

hostTest(
  "M-ONB-3: an agent of a kernel started with a TMPDIR its sandbox does not show (pam_tmpdir's, a client's own) runs with the sandbox's /tmp, so mktemp works, and the session keeps its TMPDIR; one in its project stays (its first mktemp failed: No such file or directory)",
  NEEDS_TIER_B,
  async () => {
    const box = await sandbox();
    const proj = `${box.dir}/home/proj`;
    const hostTmp = `${box.dir}/hosttmp`;
    await Deno.mkdir(proj, { recursive: true });
    await Deno.mkdir(hostTmp);
    try {
      const { secret } = await createToken(box, "agent:coder", "coder");
      const policy = await writePolicy(box, { "agent:coder": PROJECT_AGENT });
      const k = await startKernel(["--policy", policy], box, { TMPDIR: hostTmp });
      try {
        const human = await k.attach("work");
        await exec(human, `cd ${proj}`);
        const agent = await k.attach("work", secret);
        const made = await run(agent, 'f=$(mktemp) && echo "$TMPDIR $f"');
        assert.equal(made.ok, true, JSON.stringify(made.err));
        assert.match(stdout(made), /^\/tmp \/tmp\/tmp\.\S+$/);
        assert.equal(stdout(await run(human, 'echo "$TMPDIR"')), hostTmp, "the session's own");
        assert.equal(stdout(await run(agent, 'echo "$TMPDIR"')), "/tmp");
        const opened = await agent.request("pty.open", {
          cmd: "bash",
          args: ["-c", 'f=$(mktemp) && echo "made $f"; echo "done $?"; sleep 30'],
        }) as Rec;
        const screen = (await screenWhenDone(agent, opened.pty_id)).join("\n");
        assert.match(screen, /made \/tmp\/tmp\./, "in a terminal too");
        await agent.request("pty.close", { pty_id: opened.pty_id });

        const own = await run(agent, `mkdir t && export TMPDIR=${proj}/t && mktemp`);
        assert.equal(own.ok, true, JSON.stringify(own.err));
        assert.ok(stdout(own).startsWith(`${proj}/t/tmp.`), stdout(own));
        assert.equal(stdout(await run(agent, 'echo "$TMPDIR"')), `${proj}/t`, "one it shows stays");
      } finally {
        await k.stop();
      }
    } finally {
      await box.cleanup();
    }
  },
);
