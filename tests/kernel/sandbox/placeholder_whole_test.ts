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
 * A host process that reads `path` as git reads `commondir` (a stat, then the file when the stat
 * found one) over and over until `stop` exists, then prints what it saw: how many reads, how many
 * found nothing, the whole text, anything else, and how often the file the stat found was gone
 * when it was read (git: "failed to read").
 */
const READER = `
const [path, stop, whole] = Deno.args;
const seen = { reads: 0, absent: 0, whole: 0, partial: 0, vanished: 0, sample: [] };
for (let at = 0;; at++) {
  if (at % 500 === 0) try { Deno.lstatSync(stop); break; } catch { /* go on */ }
  seen.reads++;
  try { Deno.statSync(path); } catch { seen.absent++; continue; }
  let text;
  try { text = Deno.readTextFileSync(path); } catch { seen.vanished++; continue; }
  if (text === whole) { seen.whole++; continue; }
  seen.partial++;
  if (seen.sample.length < 3) seen.sample.push(text);
}
console.log(JSON.stringify(seen));
`;

/**
 * Starts {@link READER} on `path` of text `whole`; the returned function stops it and says what
 * it saw.
 */
function watch(path: string, stop: string, whole: string): () => Promise<Rec> {
  const reader = new Deno.Command(Deno.execPath(), {
    args: ["eval", READER, path, stop, whole],
    stdout: "piped",
    stderr: "null",
  }).spawn();
  return async () => {
    await Deno.writeTextFile(stop, "");
    return JSON.parse(new TextDecoder().decode((await reader.output()).stdout));
  };
}

/**
 * A sandbox with a git repository at `home/proj`, and a token and a policy for `agent:c`, who
 * writes it.
 */
async function project() {
  const box = await sandbox();
  const proj = `${box.dir}/home/proj`;
  await Deno.mkdir(proj, { recursive: true });
  await hostGit(proj, "init", "-q");
  const token = (await createToken(box, "agent:c", "c")).secret;
  const policy = await writePolicy(box, {
    "agent:c": { fs: { read: ["~/proj/**"], write: ["~/proj/**"] }, ...AGENT_RIGHTS },
  });
  return { box, proj, token, policy };
}

hostTest(
  "P-SBX-6 a host reader looping over .git/commondir while sandboxes start never sees it empty or cut short: it is absent or holds '.\\n'",
  NEEDS_TIER_B,
  async () => {
    const { box, proj, token, policy } = await project();
    const commondir = `${proj}/.git/commondir`;
    const k = await startKernel(["--policy", policy], box);
    const seeing = watch(commondir, `${box.dir}/stop`, ".\n");
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
      seen = await seeing();
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

Deno.test({
  name:
    "P-SBX-6 a host reader doing as git does with .git/commondir (a stat, then a read) never finds the placeholder gone between the two while kernels stop [ignored: needs a SPEC decision: a placeholder removed when the last sandbox ends (P-SBX-6's placeholders; the README: nothing the kernel made is left in the project) vanishes under a git that has just seen it, and git dies ('failed to read .git/commondir'); no order of file operations avoids that window, so either the commondir and config.worktree placeholders, which mean what their absence means, stay in place, or the rare failure is accepted. Measured: 7 and 9 of 20 removals caught by this reader; a loop of the real git status saw 0 failures in 4,453 runs over 20 removals]",
  ignore: true,
  fn: async () => {
    const { box, proj, token, policy } = await project();
    const seeing = watch(`${proj}/.git/commondir`, `${box.dir}/stop`, ".\n");
    let seen: Rec = {};
    try {
      for (let i = 0; i < 20; i++) {
        const k = await startKernel(["--policy", policy], box);
        const human = await k.attach("work");
        await exec(human, `cd ${proj}`);
        await exec(await k.attach("work", token), "true"); // the placeholder is made
        await k.stop(); // and removed
      }
    } finally {
      seen = await seeing();
      await box.cleanup();
    }
    assert.ok((seen.whole as number) > 0, "the reader raced them");
    assert.equal(seen.vanished, 0, JSON.stringify(seen));
  },
});
