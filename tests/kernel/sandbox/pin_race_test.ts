/**
 * bwrap resolves every bind's source when it starts and mounts it at its destination later (P-SBX-6
 * pins: `--bind DIR DIR` of each directory between a write root and a protected name). An agent's
 * program running meanwhile (in its PTY) that swaps such a directory for a link to a directory of
 * the human's and back could have the human's directory bound read-write where the project's was:
 * the mount point is where the view wants it, its content is not (SPEC §7.8 P-SBX-3: nothing
 * outside the grants is shown, let alone writable).
 */
import assert from "node:assert/strict";
import { exec } from "../../_support/exec.ts";
import { startKernelWithAgent } from "../../_support/kernel.ts";
import { hostTest, NEEDS_TIER_B } from "../../_support/host.ts";
import { PROJECT_AGENT } from "../../_support/principals.ts";
import type { Rec } from "../../_support/rec.ts";
import { pollUntil } from "../../_support/wait.ts";

/**
 * Run in the agent's PTY, in its project, with try number `i`: makes `b<i>/.vscode` (protected
 * from the next exec on, so `b<i>` is pinned then), then swaps `b<i>` with `l<i>`, a link to a
 * directory of the human's, for ever (renameat2 RENAME_EXCHANGE).
 */
const RACER = String.raw`
import ctypes, os, sys
i = sys.argv[1]
libc = ctypes.CDLL(None, use_errno=True)
nr = {"x86_64": 316, "aarch64": 276}[os.uname().machine]
os.mkdir(f"b{i}/.vscode")
a, b = f"b{i}".encode(), f"l{i}".encode()
print("ready", flush=True)
while True:
    libc.syscall(nr, -100, a, -100, b, 2)
`;

/**
 * Run by the agent's exec with try number `i`: lists `b<i>/` and writes a file there (a script,
 * so that the static check sees no path through the racer's link and the sandbox starts).
 */
const LOOK = 'ls "b$1/" 2>/dev/null; echo x > "b$1/planted" 2>/dev/null; true';

/** Tries: without the check, the race landed in bwrap's window in 2 to 4 of 24 here. */
const TRIES = 24;

hostTest(
  "P-SBX-3/P-SBX-6 a pinned directory's bind shows the project's directory, or the sandbox does not start: with b/ (holding .vscode) swapped for a link to a directory of the human's and back by the agent's PTY, no exec ever sees or writes the human's directory at b/",
  NEEDS_TIER_B,
  async () => {
    const { kernel: k, token } = await startKernelWithAgent("agent:c", PROJECT_AGENT);
    try {
      const home = `${k.box.dir}/home`;
      const proj = `${home}/proj`;
      await Deno.mkdir(proj, { recursive: true });
      await Deno.writeTextFile(`${proj}/racer.py`, RACER);
      await Deno.writeTextFile(`${proj}/look.sh`, LOOK);
      const human = await k.attach("work");
      await exec(human, `cd ${proj}`);
      const agent = await k.attach("work", token);
      const seen: string[] = [];
      for (let i = 0; i < TRIES; i++) {
        // the human's directory: the same shape (a .vscode/), and a file the project lacks
        await Deno.mkdir(`${home}/h${i}/.vscode`, { recursive: true });
        await Deno.writeTextFile(`${home}/h${i}/human-only`, "the human's\n");
        await Deno.mkdir(`${proj}/b${i}`);
        await Deno.symlink(`${home}/h${i}`, `${proj}/l${i}`);
        const opened = await agent.request("pty.open", {
          cmd: "python3",
          args: ["racer.py", `${i}`],
        }) as Rec;
        await pollUntil(
          () => agent.request("pty.read", { pty_id: opened.pty_id }) as Promise<Rec>,
          (r) => (r.screen as string[]).some((row) => row.startsWith("ready")),
        );
        // a new view (b<i>/.vscode is new): a new sandbox, started while the racer swaps
        const r = await exec(agent, `bash look.sh ${i}`, { position: "value" }).then(
          (o) => o.value as Rec,
          () => null, // its sandbox did not start (bwrap, or the kernel's check, refused it)
        );
        await agent.request("pty.close", { pty_id: opened.pty_id });
        const out = r === null ? "" : ((r.out as Rec).v as string);
        if (out.includes("human-only")) seen.push(`try ${i + 1}: ${JSON.stringify(out)}`);
        const planted = await Deno.lstat(`${home}/h${i}/planted`).then(() => true, () => false);
        if (planted) seen.push(`try ${i + 1}: planted in the human's h${i}/`);
        // whichever name the racer left the project's directory at, gone with the link
        for (const name of [`b${i}`, `l${i}`]) {
          await Deno.remove(`${proj}/${name}`, { recursive: true });
        }
      }
      assert.deepEqual(seen, []);
    } finally {
      await k.cleanup();
    }
  },
);
