/**
 * What a SIGKILLed kernel's sandboxes leave in its state directory's `tmp/` (G-STATE-2): the
 * directories a resident sandbox and the proxy (P-NET-1) are made in, with the agent's sources
 * and a dead proxy socket in them, go when the next kernel starts, as its bash scratch does.
 */
import assert from "node:assert/strict";
import { exec } from "../../_support/exec.ts";
import { startKernel, type TestKernel } from "../../_support/kernel.ts";
import { hostTest, NEEDS_TIER_B } from "../../_support/host.ts";
import { createToken, PROJECT_AGENT, writePolicy } from "../../_support/principals.ts";
import { sandbox } from "../../_support/sandbox.ts";

/** Every entry below `dir`, recursively, as paths relative to it. */
function tree(dir: string, prefix = ""): string[] {
  return [...Deno.readDirSync(dir)].flatMap((e) => {
    const rel = `${prefix}${e.name}`;
    return e.isDirectory ? [rel, ...tree(`${dir}/${e.name}`, `${rel}/`)] : [rel];
  });
}

/** Whether the regular file at `path` holds `text`. */
function holds(path: string, text: string): boolean {
  const st = Deno.lstatSync(path);
  return st.isFile && st.size < 1_000_000 && Deno.readTextFileSync(path).includes(text);
}

hostTest(
  "G-STATE-2: the sandbox- and net- directories of a SIGKILLed kernel's sandboxed agent (its sources, a dead proxy socket) are gone from tmp/ once the next kernel starts",
  NEEDS_TIER_B,
  async () => {
    const box = await sandbox();
    const tmp = `${box.dir}/state/shoal/tmp`;
    const proj = `${box.dir}/home/proj`;
    await Deno.mkdir(proj);
    const { secret } = await createToken(box, "agent:a", "agent:a");
    const policy = await writePolicy(box, {
      "agent:a": { ...PROJECT_AGENT, net_connect: ["127.0.0.2:9"] },
    });
    const first = await startKernel(["--policy", policy], box);
    let second: TestKernel | undefined;
    try {
      const human = await first.attach("work");
      await exec(human, `cd ${proj}`);
      const agent = await first.attach("work", secret);
      await exec(agent, "export SHOAL_PROBE_SECRET=hunter2; echo hi");
      const made = tree(tmp);
      assert.ok(made.some((p) => /^sandbox-/.test(p) && holds(`${tmp}/${p}`, "hunter2")));
      assert.ok(made.some((p) => /^net-[^/]*\/proxy$/.test(p)), "the proxy's socket");
      first.child.kill("SIGKILL");
      await first.stop();
      second = await startKernel(["--policy", policy], box);
      const left = [...Deno.readDirSync(tmp)].map((e) => e.name)
        .filter((name) => /^(sandbox|net|gate)-/.test(name));
      assert.deepEqual(left, []);
      assert.deepEqual(tree(tmp).filter((p) => holds(`${tmp}/${p}`, "hunter2")), []);
    } finally {
      await first.stop();
      await (second ?? { cleanup: () => box.cleanup() }).cleanup();
    }
  },
);
