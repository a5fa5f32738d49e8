/**
 * The kernel outlives a proxy socket it cannot make (P-NET-1, G-STATE-2): an agent with a
 * `net_connect` grant attaching while the state directory is full once ended the kernel, for the
 * warm shell prepared after the attach asked for the proxy's socket directory from a timer, with
 * nothing to catch the ENOSPC of its connect script.
 */
import assert from "node:assert/strict";
import { exec } from "../../_support/exec.ts";
import { hostTest, NEEDS_TIER_B } from "../../_support/host.ts";
import { startKernel } from "../../_support/kernel.ts";
import { createToken, PROJECT_AGENT, writePolicy } from "../../_support/principals.ts";
import type { Rec } from "../../_support/rec.ts";
import { rpcError } from "../../_support/rejection.ts";
import { sandbox } from "../../_support/sandbox.ts";
import { mountTmpfs, unmount } from "../../_support/tmpfs.ts";

const MiB = 1024 * 1024;

hostTest(
  "P-NET-1 an agent with a net_connect grant attaching while the state directory is full leaves " +
    "the kernel serving: its exec fails with an error, and once space is freed another session " +
    "and the agent's exec run (G-STATE-2)",
  NEEDS_TIER_B ?? (Deno.uid() === 0 ? null : "needs root to mount a tmpfs"),
  async () => {
    const box = await sandbox();
    const proj = `${box.dir}/home/proj`;
    await Deno.mkdir(proj);
    const mounted = mountTmpfs(`${box.dir}/state`, "4m");
    if (mounted !== null) {
      console.log(`skipped: ${mounted}`);
      await box.cleanup();
      return;
    }
    const ballast = `${box.dir}/state/ballast`;
    let kernel;
    try {
      const policy = { "agent:n": { ...PROJECT_AGENT, net_connect: ["example.com:443"] } };
      const token = (await createToken(box, "agent:n", "agent:n")).secret;
      kernel = await startKernel(["--policy", await writePolicy(box, policy)], box);
      const human = await kernel.attach("work");
      await exec(human, `cd ${proj}`);
      try {
        Deno.writeFileSync(ballast, new Uint8Array(8 * MiB));
      } catch {
        // the file system is full now, with the ballast as large as it could be
      }
      const agent = await kernel.attach("work", token);
      const e = await rpcError(exec(agent, "echo in"));
      assert.equal(e.code, -32603);
      assert.ok(e.message.includes(`${box.dir}/state`), e.message);
      Deno.removeSync(ballast);
      const other = await kernel.attach("other");
      const alive = await exec(other, "echo alive");
      assert.deepEqual((alive.value as Rec).out, { $: "str", v: "alive\n" });
      const r = await exec(agent, "echo in");
      assert.deepEqual((r.value as Rec).out, { $: "str", v: "in\n" });
      assert.equal(
        await Promise.race([kernel.child.status.then(() => "ended"), "running"]),
        "running",
      );
    } finally {
      if (kernel) await kernel.stop();
      unmount(`${box.dir}/state`);
      await box.cleanup();
    }
  },
);

hostTest(
  "P-NET-1 an agent with a net_connect grant whose sandbox cannot be made (no inode left in the " +
    "state directory) gets an error naming the state directory, as does a PTY of an agent with " +
    "no network, and runs once inodes are back (G-STATE-2)",
  NEEDS_TIER_B ?? (Deno.uid() === 0 ? null : "needs root to mount a tmpfs"),
  async () => {
    const box = await sandbox();
    const proj = `${box.dir}/home/proj`;
    await Deno.mkdir(proj);
    const state = `${box.dir}/state`;
    // room for everything but inodes: the journal's pages still fit, a new directory does not
    const mounted = mountTmpfs(state, "64m,nr_inodes=400");
    if (mounted !== null) {
      console.log(`skipped: ${mounted}`);
      await box.cleanup();
      return;
    }
    let kernel;
    const ballast: string[] = [];
    try {
      const policy = {
        "agent:n": { ...PROJECT_AGENT, net_connect: ["example.com:443"] },
        "agent:p": PROJECT_AGENT,
      };
      const token = (await createToken(box, "agent:n", "agent:n")).secret;
      const plain = (await createToken(box, "agent:p", "agent:p")).secret;
      kernel = await startKernel(["--policy", await writePolicy(box, policy)], box);
      const human = await kernel.attach("work");
      await exec(human, `cd ${proj}`);
      try {
        for (let n = 0;; n++) {
          Deno.writeFileSync(`${state}/inode-${n}`, new Uint8Array(0));
          ballast.push(`${state}/inode-${n}`);
        }
      } catch {
        // no inode left
      }
      const agent = await kernel.attach("work", token);
      const e = await rpcError(exec(agent, "echo in"));
      assert.equal(e.code, -32603);
      assert.ok(e.message.includes(state), e.message);
      // a PTY program's sandbox, of a principal with no network (its start gate's directory)
      const pty = await rpcError(
        (await kernel.attach("work", plain)).request("pty.open", { cmd: "true", args: [] }),
      );
      assert.ok(pty.message.includes(state), pty.message);
      for (const path of ballast) Deno.removeSync(path);
      const r = await exec(agent, "echo in");
      assert.deepEqual((r.value as Rec).out, { $: "str", v: "in\n" });
    } finally {
      if (kernel) await kernel.stop();
      unmount(state);
      await box.cleanup();
    }
  },
);
