/**
 * Files the kernel was started with beyond stdin, stdout and stderr (a client's or a terminal's
 * that lacked close-on-exec) reach none of its runs: an agent entering its sandbox through
 * nsenter (a run the launcher has no spare for) held them, and read through an open directory
 * outside its view.
 */
import assert from "node:assert/strict";
import { exec } from "../../_support/exec.ts";
import { KERNEL_BIN, sandbox } from "../../_support/sandbox.ts";
import { launchKernel, type TestKernel } from "../../_support/kernel.ts";
import { hostTest, NEEDS_TIER_B } from "../../_support/host.ts";
import { createToken, PROJECT_AGENT, writePolicy } from "../../_support/principals.ts";
import type { Rec } from "../../_support/rec.ts";

/** The stdout of `src` run in value position. */
async function stdout(conn: Parameters<typeof exec>[0], src: string): Promise<string> {
  const outcome = (await exec(conn, src, { position: "value" })).value as Rec;
  return ((outcome.out as Rec).v as string) ?? "";
}

hostTest(
  "a file the kernel inherited (here fd 9, the agent's HOME, outside its sandbox) reaches neither the human's runs nor an agent's, even those entering its sandbox through nsenter (runs at once)",
  NEEDS_TIER_B,
  async () => {
    const box = await sandbox();
    const home = `${box.dir}/home`;
    await Deno.mkdir(`${home}/proj`);
    await Deno.writeTextFile(`${home}/secret`, "s3cret\n");
    const { secret } = await createToken(box, "agent:a", "a");
    const policy = await writePolicy(box, { "agent:a": PROJECT_AGENT });
    let k: TestKernel | undefined;
    try {
      k = await launchKernel(
        box,
        ["--socket", box.socket(), "--policy", policy],
        box.socket(),
        {},
        ["/bin/bash", "-c", 'exec 9<"$HOME"; exec "$0" "$@"', KERNEL_BIN],
      );
      const human = await k.attach("work");
      await exec(human, `cd ${home}/proj`);
      assert.equal(
        await stdout(human, "[ -e /proc/$$/fd/9 ] && echo open || echo closed"),
        "closed\n",
      );
      const agent = await k.attach("work", secret);
      // Runs at once: those the launcher has no spare for enter through nsenter.
      const read = "cat /proc/$$/fd/9/secret 2>/dev/null || echo refused";
      const outs = await Promise.all([1, 2, 3, 4, 5, 6, 7, 8].map(() => stdout(agent, read)));
      assert.deepEqual(outs, Array(8).fill("refused\n"));
    } finally {
      if (k) await k.cleanup();
      else await box.cleanup();
    }
  },
);
