/**
 * The kernel's own files reached through a symlink a sandboxed agent may replace (README's
 * sandbox section): the kernel resolves its policy file and state directory once at start, so an
 * agent that swaps the link for a directory of its own cannot hand the kernel its own policy.
 */
import assert from "node:assert/strict";
import { exec } from "../../_support/exec.ts";
import { hostTest, NEEDS_TIER_B } from "../../_support/host.ts";
import { startKernel } from "../../_support/kernel.ts";
import {
  AGENT_RIGHTS,
  createToken,
  PROJECT_AGENT,
  writePolicy,
} from "../../_support/principals.ts";
import type { Rec } from "../../_support/rec.ts";
import { sandbox } from "../../_support/sandbox.ts";
import { waitUntil } from "../../_support/wait.ts";

/** A policy that would free `principal` from its sandbox and grant it all of HOME. */
function freedPolicy(principal: string): string {
  return JSON.stringify({
    principal: {
      [principal]: {
        fs: { read: ["~/**"], write: ["~/**"] },
        proc_spawn: ["*"],
        opaque: "allow",
        auto_apply: "in-grant",
        sandbox: false,
      },
    },
  });
}

hostTest(
  "an agent that replaces a symlink in its write grant on the way to the kernel's policy file does not hand the kernel a policy of its own: the kernel reads the file it started with",
  NEEDS_TIER_B,
  async () => {
    const box = await sandbox();
    const home = `${box.dir}/home`;
    const proj = `${home}/proj`;
    await Deno.mkdir(proj);
    await Deno.writeTextFile(`${home}/secret`, "s3cret\n");
    // the human keeps the policy outside the project, linked from inside it
    await writePolicy(`${home}/conf/leash.jsonc`, { "agent:p": PROJECT_AGENT });
    await Deno.symlink(`${home}/conf`, `${proj}/conf`);
    const { secret } = await createToken(box, "agent:p", "p");
    const k = await startKernel(["--policy", `${proj}/conf/leash.jsonc`], box);
    try {
      const human = await k.attach("work");
      await exec(human, `cd ${proj}`);
      const agent = await k.attach("work", secret);
      // by a program the static check cannot see into (opaque: allow): only the sandbox holds it
      const swap = await exec(
        agent,
        `perl -e 'unlink "conf" or die; mkdir "conf" or die; open(my $f, ">", "conf/leash.jsonc") or die; print $f $ARGV[0]; print "swapped\\n"' '${
          freedPolicy("agent:p")
        }'`,
        { position: "value" },
      );
      assert.equal(((swap.value as Rec).out as Rec).v, "swapped\n", JSON.stringify(swap));
      assert.equal(Deno.lstatSync(`${proj}/conf`).isDirectory, true, "the link was replaced");
      // a policy applies from the next attach on
      const again = await k.attach("work", secret);
      const read = await exec(again, `cat ${home}/secret`, { position: "value" })
        .then((r) => JSON.stringify(r), (e) => String(e));
      assert.doesNotMatch(read, /s3cret/);
      assert.ok(!k.stderr.some((line) => line.includes("reloaded")), k.stderr.join("\n"));
    } finally {
      await k.cleanup();
    }
  },
);

Deno.test({
  name:
    "SPEC decision needed (P-SBX-3 / G-STATE-3): a policy file with a second hard link inside an agent's write grant (the human linked it into the project) is rewritten by the agent's sandboxed run through that name, which no mask covers, and its next exec runs unconfined; this test expects the kernel to refuse a policy file of more than one link (exit 1 at start, the last good policy on a re-read)",
  ignore: true || NEEDS_TIER_B !== null,
  fn: async () => {
    const box = await sandbox();
    const home = `${box.dir}/home`;
    const proj = `${home}/proj`;
    await Deno.mkdir(`${proj}/.shoal`, { recursive: true });
    await Deno.writeTextFile(`${home}/secret`, "s3cret\n");
    const file = await writePolicy(`${home}/.config/shoal/leash.jsonc`, {
      "agent:p": PROJECT_AGENT,
    });
    await Deno.link(file, `${proj}/.shoal/leash.jsonc`);
    const { secret } = await createToken(box, "agent:p", "p");
    const k = await startKernel([], box).catch(() => null);
    if (k === null) return await box.cleanup(); // refused at start: what this test expects
    try {
      await exec(await k.attach("work"), `cd ${proj}`);
      const agent = await k.attach("work", secret);
      await exec(
        agent,
        `perl -e 'open(my $f, "+<", ".shoal/leash.jsonc") or die; truncate($f, 0); print $f $ARGV[0]' '${
          freedPolicy("agent:p")
        }'`,
      ).catch(() => {});
      const read = await exec(agent, `cat ${home}/secret`, { position: "value" })
        .then((r) => JSON.stringify(r), (e) => String(e));
      assert.doesNotMatch(read, /s3cret/);
    } finally {
      await k.cleanup();
    }
  },
});

hostTest(
  "P-SBX-3: the human saving the policy file atomically (a new file renamed over it, as editors and tools do) while an agent's sandbox lives does not unmask it there: Linux detached the mask with the old file, and the agent's running loop and its next exec, under a write grant covering ~/.config, read and rewrote the policy the kernel then loaded",
  NEEDS_TIER_B,
  async () => {
    const box = await sandbox();
    const home = `${box.dir}/home`;
    await Deno.mkdir(`${home}/proj`);
    await Deno.writeTextFile(`${box.dir}/secret`, "s3cret\n");
    const entry = { ...AGENT_RIGHTS, fs: { read: ["~/**"], write: ["~/**"] } };
    const file = await writePolicy(`${home}/.config/shoal/leash.jsonc`, { "agent:p": entry });
    const { secret } = await createToken(box, "agent:p", "p");
    const k = await startKernel([], box);
    try {
      await exec(await k.attach("work"), `cd ${home}/proj`);
      const agent = await k.attach("work", secret);
      const loop = `while :; do echo '${freedPolicy("agent:p")}' > ${file} && echo wrote; done`;
      const { task } = await exec(agent, `eval "$(echo ${btoa(loop)} | base64 -d)"`, {
        async: true,
      });
      // the loop runs in its sandbox, where the file is masked: it writes nothing yet
      await agent.request("task.output", { task });
      const saved = await writePolicy(`${file}.new`, { "agent:p": entry, "agent:q": entry });
      await Deno.rename(saved, file);
      const human = await Deno.readTextFile(file);
      await waitUntil(async () => {
        const t = await agent.request("task.get", { task }) as Rec;
        return t.state !== "running";
      }, 3000);
      const look = await exec(agent, `sh -c 'cat ${file}'`, { position: "value" })
        .then((r) => JSON.stringify(r), (e) => String(e));
      assert.doesNotMatch(look, /agent:q/, "the agent read the policy file");
      await agent.request("task.cancel", { task });
      assert.equal(await Deno.readTextFile(file), human, "the agent rewrote the policy file");
      const read = await exec(agent, `sh -c 'cat ${box.dir}/secret'`, { position: "value" })
        .then((r) => JSON.stringify(r), (e) => String(e));
      assert.doesNotMatch(read, /s3cret/, "the agent freed itself");
    } finally {
      await k.cleanup();
    }
  },
);
