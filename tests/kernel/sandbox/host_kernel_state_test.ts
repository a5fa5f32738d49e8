/**
 * What a sandboxed agent's run shares with the host through the Linux kernel itself rather than
 * through files, sockets or processes (SPEC §7.8 P-SBX-3): its settings (`/proc/sys`) and its key
 * store (keyrings). A kernel run as root (a container, a CI machine) runs its sandboxes as uid 0
 * without capabilities and without a user namespace, which owns both.
 */
import assert from "node:assert/strict";
import { exec } from "../../_support/exec.ts";
import { startKernelWithAgent, type TestKernel } from "../../_support/kernel.ts";
import { hostTest, NEEDS_TIER_B } from "../../_support/host.ts";
import { PROJECT_AGENT } from "../../_support/principals.ts";
import type { Rec } from "../../_support/rec.ts";

/** The stdout of `python` run by the agent in its project, whatever its status. */
async function agentPython(k: TestKernel, token: string, python: string): Promise<string> {
  const proj = `${k.box.dir}/home/proj`;
  await Deno.mkdir(proj, { recursive: true });
  await Deno.writeTextFile(`${proj}/probe.py`, python);
  await exec(await k.attach("work"), `cd ${proj}`);
  const agent = await k.attach("work", token);
  const r = await exec(agent, "python3 probe.py > probe.out 2>&1; cat probe.out", {
    position: "value",
  });
  const out = ((r.value as Rec).out as Rec).v;
  return typeof out === "string" ? out : JSON.stringify(r.value);
}

/** Opens each path for writing (never writes) and prints `path errno-name` or `path ok`. */
const OPEN_FOR_WRITING = String.raw`
import errno, os
for path in ["/proc/sys/kernel/core_pattern", "/proc/sys/kernel/hostname", "/proc/sys/vm/drop_caches"]:
    try:
        os.close(os.open(path, os.O_WRONLY))
        print(path, "ok")
    except OSError as e:
        print(path, errno.errorcode[e.errno])
print("ostype", open("/proc/sys/kernel/ostype").read().strip())
`;

hostTest(
  "P-SBX-3 a sandboxed run cannot change the host kernel's settings: /proc/sys is read-only inside (a kernel run as root let an agent open kernel.core_pattern for writing, a program the host then runs as root at the next crash), and stays readable",
  NEEDS_TIER_B,
  async () => {
    const { kernel: k, token } = await startKernelWithAgent("agent:c", PROJECT_AGENT);
    try {
      const out = await agentPython(k, token, OPEN_FOR_WRITING);
      const lines = out.trim().split("\n");
      for (const line of lines.slice(0, 3)) assert.match(line, / (EROFS|EACCES|EPERM)$/, out);
      assert.equal(lines[3], "ostype Linux", out);
    } finally {
      await k.cleanup();
    }
  },
);
