/**
 * G-STATE-4 for what a sandboxed agent's runs make in the state directory: the compiled launcher
 * (kept for later kernels, hard-linked into each resident's directory), the proxy's connect script
 * and socket (P-NET-1), the scratch FIFOs of residents and PTY start gates.
 */
import assert from "node:assert/strict";
import { exec } from "../../_support/exec.ts";
import { startKernel, type TestKernel } from "../../_support/kernel.ts";
import { HOST_SANDBOX, hostTest, NEEDS_TIER_B } from "../../_support/host.ts";
import { createToken, PROJECT_AGENT, writePolicy } from "../../_support/principals.ts";
import type { Rec } from "../../_support/rec.ts";
import { sandbox } from "../../_support/sandbox.ts";
import { screenWhenDone } from "../../_support/pty_screen.ts";

/** `path → mode` of every entry below `dir` whose mode is not 0700 (directories) or 0600. */
function loose(dir: string, top = dir): Record<string, string> {
  const found: Record<string, string> = {};
  for (const e of Deno.readDirSync(dir)) {
    const path = `${dir}/${e.name}`;
    const st = Deno.lstatSync(path);
    const mode = st.mode! & 0o7777;
    if (mode !== (st.isDirectory ? 0o700 : 0o600)) {
      found[path.slice(top.length + 1)] = mode.toString(8);
    }
    if (st.isDirectory) Object.assign(found, loose(path, top));
  }
  return found;
}

hostTest(
  "G-STATE-4: under umask 000 a sandboxed agent with a net_connect grant leaves nothing in the state directory open to group or others: the proxy's connect script and socket are 0600, the compiled launcher 0700",
  NEEDS_TIER_B,
  async () => {
    const box = await sandbox();
    const state = `${box.dir}/state/shoal`;
    const proj = `${box.dir}/home/proj`;
    await Deno.mkdir(proj);
    const { secret } = await createToken(box, "agent:a", "agent:a");
    const policy = await writePolicy(box, {
      "agent:a": { ...PROJECT_AGENT, net_connect: ["127.0.0.2:9"] },
    });
    const previous = Deno.umask(0);
    let k: TestKernel;
    try {
      k = await startKernel(["--policy", policy], box);
    } finally {
      Deno.umask(previous);
    }
    try {
      const human = await k.attach("work");
      await exec(human, `cd ${proj}`);
      const agent = await k.attach("work", secret);
      const r = await exec(agent, "echo hi", { position: "value" });
      assert.deepEqual(((r as Rec).value as Rec).out, { $: "str", v: "hi\n" });
      const opened = await agent.request("pty.open", {
        cmd: "bash",
        args: ["-c", "echo done; sleep 30"],
      }) as Rec;
      await screenWhenDone(agent, opened.pty_id);
      const tmp = [...Deno.readDirSync(`${state}/tmp`)].map((e) => e.name);
      assert.ok(tmp.some((name) => name.startsWith("net-")), "the proxy's directory");
      // the compiled launcher stays executable, by its owner alone
      const launchers = HOST_SANDBOX.tier === "B" && HOST_SANDBOX.cc !== null
        ? tmp.filter((name) => /^launcher-[0-9a-f]{16}$/.test(name)).map((name) => `tmp/${name}`)
        : [];
      const resident = tmp.find((name) => name.startsWith("sandbox-"));
      if (launchers.length > 0 && resident !== undefined) {
        launchers.push(`tmp/${resident}/launcher`);
      }
      const expected = Object.fromEntries(launchers.map((path) => [path, "700"]));
      assert.deepEqual(loose(state), expected);
      await agent.request("pty.close", { pty_id: opened.pty_id });
    } finally {
      await k.cleanup();
    }
  },
);
