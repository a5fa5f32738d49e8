/**
 * A file placeholder (P-SBX-6: `.git/commondir`, `.git/config.worktree`) appears on the host whole:
 * the human's own git reads it while an agent's sandbox starts, and dies on an empty `commondir`
 * ("failed to read .git/commondir").
 */
import assert from "node:assert/strict";
import { exec } from "../../_support/exec.ts";
import { hostGit } from "../../_support/git.ts";
import { hostTest, NEEDS_TIER_B } from "../../_support/host.ts";
import { startKernel } from "../../_support/kernel.ts";
import { AGENT_RIGHTS, createToken, writePolicy } from "../../_support/principals.ts";
import type { Rec } from "../../_support/rec.ts";
import { sandbox } from "../../_support/sandbox.ts";

/** Sandbox starts, each making the placeholder anew. */
const STARTS = 60;

/**
 * A host process that opens and reads `path` over and over until `stop` exists, then prints what
 * it saw: how many reads, how many found nothing, the whole text, anything else.
 */
const READER = `
const [path, stop, whole] = Deno.args;
const seen = { reads: 0, absent: 0, whole: 0, partial: 0, sample: [] };
for (let at = 0;; at++) {
  if (at % 500 === 0) try { Deno.lstatSync(stop); break; } catch { /* go on */ }
  seen.reads++;
  let text;
  try { text = Deno.readTextFileSync(path); } catch { seen.absent++; continue; }
  if (text === whole) { seen.whole++; continue; }
  seen.partial++;
  if (seen.sample.length < 3) seen.sample.push(text);
}
console.log(JSON.stringify(seen));
`;

hostTest(
  "P-SBX-6 a host reader looping over .git/commondir while sandboxes start never sees it empty or cut short: it is absent or holds '.\\n'",
  NEEDS_TIER_B,
  async () => {
    const box = await sandbox();
    const proj = `${box.dir}/home/proj`;
    const commondir = `${proj}/.git/commondir`;
    const stop = `${box.dir}/stop`;
    await Deno.mkdir(proj, { recursive: true });
    await hostGit(proj, "init", "-q");
    const token = (await createToken(box, "agent:c", "c")).secret;
    const policy = await writePolicy(box, {
      "agent:c": { fs: { read: ["~/proj/**"], write: ["~/proj/**"] }, ...AGENT_RIGHTS },
    });
    const k = await startKernel(["--policy", policy], box);
    const reader = new Deno.Command(Deno.execPath(), {
      args: ["eval", READER, commondir, stop, ".\n"],
      stdout: "piped",
      stderr: "null",
    }).spawn();
    let seen: Rec = {};
    let remade = 0;
    let left: string[] = [];
    try {
      const human = await k.attach("work");
      await exec(human, `cd ${proj}`);
      const agent = await k.attach("work", token);
      for (let i = 0; i < STARTS; i++) {
        // removed on the host (by hand, git clean -fdx): the next exec starts a new sandbox,
        // which makes it again
        await Deno.remove(commondir).catch(() => {});
        const ran = (await exec(agent, "true", { position: "value" })).value as Rec;
        assert.equal(ran.ok, true, JSON.stringify(ran));
        if (Deno.readTextFileSync(commondir) === ".\n") remade++;
      }
    } finally {
      await Deno.writeTextFile(stop, "");
      const out = await reader.output();
      seen = JSON.parse(new TextDecoder().decode(out.stdout));
      await k.stop();
      left = [...Deno.readDirSync(`${proj}/.git`)].map((e) => e.name).filter((n) =>
        n.startsWith("commondir") || n.startsWith("config.worktree")
      );
      await k.cleanup();
    }
    console.log(`starts ${STARTS}, remade ${remade}, reader ${JSON.stringify(seen)}`);
    assert.equal(remade, STARTS, "each start made the placeholder");
    assert.ok((seen.absent as number) > 0 && (seen.whole as number) > 0, "the reader raced them");
    assert.deepEqual(left, [], "nothing of the placeholders is left once the kernel stopped");
    assert.equal(seen.partial, 0, `partial texts read: ${JSON.stringify(seen.sample)}`);
  },
);
