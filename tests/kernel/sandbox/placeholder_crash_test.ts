/**
 * Placeholders (P-SBX-6) of a kernel SIGKILLed while a sandboxed exec runs: left on the host by
 * the kill, gone once the next kernel starts on the same state directory, at once.
 */
import assert from "node:assert/strict";
import { exec } from "../../_support/exec.ts";
import { hostGit } from "../../_support/git.ts";
import { hostTest, NEEDS_TIER_B } from "../../_support/host.ts";
import { startKernel } from "../../_support/kernel.ts";
import { AGENT_RIGHTS, createToken, writePolicy } from "../../_support/principals.ts";
import { kernelPid } from "../../_support/proc.ts";
import { type Sandbox, sandbox } from "../../_support/sandbox.ts";
import { waitUntil } from "../../_support/wait.ts";

/** The names in `dir`, sorted. */
function names(dir: string): string[] {
  return [...Deno.readDirSync(dir)].map((e) => e.name).sort();
}

/**
 * A kernel whose agent, writing `~/proj` of `box` (`proj`), runs `touch started; sleep 60` there in
 * a session the human moved to it; returned once it runs, with the policy file it started with.
 */
async function startedInProject(box: Sandbox, proj: string) {
  const token = (await createToken(box, "agent:c", "c")).secret;
  const policy = await writePolicy(box, {
    "agent:c": { fs: { read: ["~/proj/**"], write: ["~/proj/**"] }, ...AGENT_RIGHTS },
  });
  const k = await startKernel(["--policy", policy], box);
  try {
    const human = await k.attach("work");
    await exec(human, `cd ${proj}`);
    const agent = await k.attach("work", token);
    const run = agent.request("exec", { src: "touch started; sleep 60" }).catch(() => {});
    assert.ok(await waitUntil(() => names(proj).includes("started"), 10_000), "it runs");
    return { k, policy, run };
  } catch (e) {
    await k.cleanup();
    throw e;
  }
}

hostTest(
  "P-SBX-6 the placeholders of a kernel SIGKILLed during a sandboxed exec (at the root, and a nested repository's commondir) are gone once the next kernel starts right after",
  NEEDS_TIER_B,
  async () => {
    const box = await sandbox();
    const proj = `${box.dir}/home/proj`;
    await Deno.mkdir(`${proj}/sub`, { recursive: true });
    await hostGit(proj, "init", "-q");
    await hostGit(`${proj}/sub`, "init", "-q", "nested");
    const before = { root: names(proj), git: names(`${proj}/.git`) };
    const nested = names(`${proj}/sub/nested/.git`);
    const { k, policy, run } = await startedInProject(box, proj);
    try {
      Deno.kill(kernelPid(k.socket), "SIGKILL");
      assert.equal((await k.child.status).signal, "SIGKILL");
      await run;
      assert.ok(names(proj).includes(".envrc"), "the kill left the placeholders");
      assert.ok(names(`${proj}/sub/nested/.git`).includes("commondir"));
      const k2 = await startKernel(["--policy", policy], box);
      await k2.stop();
      Deno.removeSync(`${proj}/started`);
      assert.deepEqual(names(proj), before.root);
      assert.deepEqual(names(`${proj}/.git`), before.git);
      assert.deepEqual(names(`${proj}/sub/nested/.git`), nested);
    } finally {
      await k.cleanup();
    }
  },
);

hostTest(
  "P-SBX-6 the placeholders of one sandbox are recorded in one file (issue 33: two files written per placeholder held up a first exec ~0.9 ms each), which lists every one made, and is gone with them",
  NEEDS_TIER_B,
  async () => {
    const box = await sandbox();
    const proj = `${box.dir}/home/proj`;
    await Deno.mkdir(proj, { recursive: true });
    const { k, run } = await startedInProject(box, proj);
    try {
      const made = names(proj).filter((name) => name !== "started").map((name) =>
        `${proj}/${name}`
      );
      assert.ok(made.length > 1, `placeholders: ${made}`);
      const base = `${box.dir}/state/shoal/placeholders`;
      const [own] = names(base);
      const files = names(`${base}/${own}`);
      assert.equal(files.length, 1, files.join(" "));
      const records = JSON.parse(await Deno.readTextFile(`${base}/${own}/${files[0]}`));
      assert.deepEqual(records.map((r: { path: string }) => r.path).sort(), made.sort());
      assert.ok(records.every((r: { identity?: string }) => typeof r.identity === "string"));
      await k.stop();
      await run;
      assert.deepEqual(names(proj), ["started"]);
      assert.deepEqual(names(`${base}/${own}`), [], "its records went with them");
    } finally {
      await k.cleanup();
    }
  },
);
