/**
 * A common directory that a repository's `commondir` names and that is missing is held by an
 * empty directory placeholder (P-SBX-6); the next exec's scan takes that placeholder for what it
 * is (the directory is still missing), so nothing the kernel made is left in the project.
 */
import assert from "node:assert/strict";
import { exec } from "../../_support/exec.ts";
import { hostTest, NEEDS_TIER_B } from "../../_support/host.ts";
import { startKernel } from "../../_support/kernel.ts";
import { createToken, PROJECT_AGENT, writePolicy } from "../../_support/principals.ts";
import type { Rec } from "../../_support/rec.ts";
import { sandbox } from "../../_support/sandbox.ts";

/** The names in `dir`, sorted. */
function names(dir: string): string[] {
  return [...Deno.readDirSync(dir)].map((e) => e.name).sort();
}

hostTest(
  "P-SBX-6 a missing common directory a root repository's commondir names is held by a placeholder the next exec's scan still takes for missing: it took it for the human's directory, made config/ and hooks/ placeholders in it for a second sandbox, so the first could not remove it and it stayed in the project after the kernel stopped",
  NEEDS_TIER_B,
  async () => {
    const box = await sandbox();
    const proj = `${box.dir}/home/proj`;
    await Deno.mkdir(proj, { recursive: true });
    const token = (await createToken(box, "agent:c", "c")).secret;
    const policy = await writePolicy(box, { "agent:c": PROJECT_AGENT });
    const k = await startKernel(["--policy", policy], box);
    try {
      const human = await k.attach("work");
      await exec(human, `cd ${proj}`);
      const agent = await k.attach("work", token);
      // a repository whose commondir names ../y, which is missing (the static layer would ask
      // approval for a plain write of .git/commondir; the sandbox's wall is what is tested)
      const made = await exec(
        agent,
        `mkdir .git && echo 'ref: refs/heads/main' > .git/HEAD && ` +
          `perl -e 'open F, ">.git/commondir"; print F "../y\\n"' && echo made`,
        { position: "value" },
      );
      assert.equal(((made.value as Rec).out as Rec).v, "made\n");
      for (const n of [1, 2, 3]) {
        const r = (await exec(agent, `echo run-${n}; ls -A y`, { position: "value" })).value as Rec;
        assert.equal(r.ok, true, JSON.stringify(r));
        assert.ok(names(proj).includes("y"), `run ${n}: y is held while its sandbox lives`);
      }
      await k.stop();
      assert.deepEqual(names(proj), [".git"]);
    } finally {
      await k.cleanup();
    }
  },
);
