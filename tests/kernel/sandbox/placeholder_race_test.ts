/**
 * The kernel makes a placeholder (P-SBX-6) in a directory an agent's program running in another
 * sandbox may write at that moment (a PTY's: no resident waits for it), so nothing the kernel does
 * there after making it may follow what the agent puts at that name meanwhile (SPEC §7.8 P-SBX-3:
 * nothing outside the grants is the agent's to change).
 */
import assert from "node:assert/strict";
import { exec } from "../../_support/exec.ts";
import { startKernelWithAgent } from "../../_support/kernel.ts";
import { hostTest, NEEDS_TIER_B } from "../../_support/host.ts";
import { PROJECT_AGENT } from "../../_support/principals.ts";
import type { Rec } from "../../_support/rec.ts";
import { pollUntil } from "../../_support/wait.ts";

/**
 * Run in the agent's PTY, in its project: makes `sub/.envrc` a link to the absent `t/x` (whose
 * directory exists), so the kernel's next view holds `t/x` with a directory placeholder, then
 * swaps `t/x` and `t/s` (a link to a file outside the project) with renameat2(RENAME_EXCHANGE)
 * for ever: whenever the placeholder is there, the link takes its name.
 */
const RACER = String.raw`
import ctypes, os, sys
i = sys.argv[1]
libc = ctypes.CDLL(None, use_errno=True)
nr = {"x86_64": 316, "aarch64": 276}[os.uname().machine]
os.symlink(f"../t{i}/x", f"sub{i}/.envrc")
print("ready", flush=True)
while True:
    libc.syscall(nr, -100, f"t{i}/s".encode(), -100, f"t{i}/x".encode(), 2)
`;

hostTest(
  "P-SBX-3/P-SBX-6 an agent cannot make the kernel change a file outside its grants through a placeholder it swaps for a link: a program in its PTY swapped the fresh t/x placeholder for a link to a 0600 file of the human's, and the kernel's chmod (sticky bit) followed it",
  NEEDS_TIER_B,
  async () => {
    const { kernel: k, token } = await startKernelWithAgent("agent:c", PROJECT_AGENT);
    try {
      const proj = `${k.box.dir}/home/proj`;
      const secret = `${k.box.dir}/home/secret`;
      await Deno.mkdir(proj, { recursive: true });
      await Deno.writeTextFile(secret, "the human's\n", { mode: 0o600 });
      await Deno.chmod(secret, 0o600);
      await Deno.writeTextFile(`${proj}/racer.py`, RACER);
      const human = await k.attach("work");
      await exec(human, `cd ${proj}`);
      const agent = await k.attach("work", token);
      // a swap lands between the placeholder's mkdir and its chmod in some tries only: each try
      // has a placeholder of its own (t<i>/x) and its own racer
      for (let i = 0; i < 20; i++) {
        await Deno.mkdir(`${proj}/t${i}`);
        await Deno.mkdir(`${proj}/sub${i}`);
        await Deno.symlink(secret, `${proj}/t${i}/s`);
        const opened = await agent.request("pty.open", {
          cmd: "python3",
          args: ["racer.py", `${i}`],
        }) as Rec;
        await pollUntil(
          () => agent.request("pty.read", { pty_id: opened.pty_id }) as Promise<Rec>,
          (r) => (r.screen as string[]).some((row) => row.startsWith("ready")),
        );
        // its view holds t<i>/x, absent: the kernel makes it
        await exec(agent, "ls sub0").catch(() => {});
        await agent.request("pty.close", { pty_id: opened.pty_id });
        const mode = (await Deno.lstat(secret)).mode! & 0o7777;
        assert.equal(mode.toString(8), "600", `the human's file, after try ${i + 1}`);
      }
    } finally {
      await k.cleanup();
    }
  },
);
