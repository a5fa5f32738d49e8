/**
 * bwrap resolves every bind's source when it starts and mounts it at its destination later (P-SBX-6
 * pins: `--bind DIR DIR` of each directory between a write root and a protected name; protected
 * paths: `--ro-bind PATH PATH`). An agent's program running meanwhile (in its PTY) that swaps such
 * a directory or file for a link to one of the human's and back could have the human's bound
 * where the project's was: the mount point is where the view wants it, its content is not (SPEC
 * §7.8 P-SBX-3: nothing outside the grants is shown, let alone writable).
 */
import assert from "node:assert/strict";
import { exec } from "../../_support/exec.ts";
import { startKernelWithAgent } from "../../_support/kernel.ts";
import { hostTest, NEEDS_TIER_B } from "../../_support/host.ts";
import { PROJECT_AGENT } from "../../_support/principals.ts";
import type { Rec } from "../../_support/rec.ts";
import { pollUntil } from "../../_support/wait.ts";

/**
 * Run in the agent's PTY, in its project: `racer.py MAKE KIND A B` makes MAKE (`dir` or `file`;
 * a protected name, so protected from the next exec on), then swaps A with B for ever (renameat2
 * RENAME_EXCHANGE).
 */
const RACER = String.raw`
import ctypes, os, sys
make, kind, a, b = sys.argv[1:]
libc = ctypes.CDLL(None, use_errno=True)
nr = {"x86_64": 316, "aarch64": 276}[os.uname().machine]
if kind == "dir": os.mkdir(make)
else: open(make, "w").write("the project's\n")
print("ready", flush=True)
while True:
    libc.syscall(nr, -100, a.encode(), -100, b.encode(), 2)
`;

/** Tries: without the check, the race landed in bwrap's window in 2 to 4 of 24 here. */
const TRIES = 24;

/** One try `i` in a project `proj` of a HOME `home`. */
interface Try {
  /** Sets up the project and the human's files; returns the racer's arguments. */
  prepare(home: string, proj: string, i: number): Promise<string[]>;
  /** What the agent's exec runs (a script: the static check sees no path through the link). */
  look: string;
  /** What went wrong in the try, seen on the host and in the exec's output ("" when none). */
  check(home: string, i: number, out: string): Promise<string>;
  /** Removes what the try left in the project. */
  clear(proj: string, i: number): Promise<void>;
}

/** Runs {@link TRIES} tries with a kernel and a sandboxed project agent; asserts none went wrong. */
async function raceTries(t: Try): Promise<void> {
  const { kernel: k, token } = await startKernelWithAgent("agent:c", PROJECT_AGENT);
  try {
    const home = `${k.box.dir}/home`;
    const proj = `${home}/proj`;
    await Deno.mkdir(proj, { recursive: true });
    await Deno.writeTextFile(`${proj}/racer.py`, RACER);
    await Deno.writeTextFile(`${proj}/look.sh`, t.look);
    const human = await k.attach("work");
    await exec(human, `cd ${proj}`);
    const agent = await k.attach("work", token);
    const seen: string[] = [];
    for (let i = 0; i < TRIES; i++) {
      const args = await t.prepare(home, proj, i);
      const opened = await agent.request("pty.open", {
        cmd: "python3",
        args: ["racer.py", ...args],
      }) as Rec;
      await pollUntil(
        () => agent.request("pty.read", { pty_id: opened.pty_id }) as Promise<Rec>,
        (r) => (r.screen as string[]).some((row) => row.startsWith("ready")),
      );
      // a new view (the made name is new): a new sandbox, started while the racer swaps
      const r = await exec(agent, `bash look.sh ${i}`, { position: "value" }).then(
        (o) => o.value as Rec,
        () => null, // its sandbox did not start (bwrap, or the kernel's check, refused it)
      );
      await agent.request("pty.close", { pty_id: opened.pty_id });
      const wrong = await t.check(home, i, r === null ? "" : ((r.out as Rec).v as string));
      if (wrong !== "") seen.push(`try ${i + 1}: ${wrong}`);
      await t.clear(proj, i);
    }
    assert.deepEqual(seen, []);
  } finally {
    await k.cleanup();
  }
}

/** Removes `names` in `proj`, whichever is a link or a directory now. */
async function removeAll(proj: string, names: string[]): Promise<void> {
  for (const name of names) await Deno.remove(`${proj}/${name}`, { recursive: true });
}

hostTest(
  "P-SBX-3/P-SBX-6 a pinned directory's bind shows the project's directory, or the sandbox does not start: with b/ (holding .vscode) swapped for a link to a directory of the human's and back by the agent's PTY, no exec ever sees or writes the human's directory at b/",
  NEEDS_TIER_B,
  () =>
    raceTries({
      async prepare(home, proj, i) {
        // the human's directory: the same shape (a .vscode/), and a file the project lacks
        await Deno.mkdir(`${home}/h${i}/.vscode`, { recursive: true });
        await Deno.writeTextFile(`${home}/h${i}/human-only`, "the human's\n");
        await Deno.mkdir(`${proj}/b${i}`);
        await Deno.symlink(`${home}/h${i}`, `${proj}/l${i}`);
        return [`b${i}/.vscode`, "dir", `b${i}`, `l${i}`];
      },
      look: 'ls "b$1/" 2>/dev/null; echo x > "b$1/planted" 2>/dev/null; true',
      async check(home, i, out) {
        const planted = await Deno.lstat(`${home}/h${i}/planted`).then(() => true, () => false);
        if (planted) return `planted in the human's h${i}/`;
        return out.includes("human-only") ? JSON.stringify(out) : "";
      },
      clear: (proj, i) => removeAll(proj, [`b${i}`, `l${i}`]),
    }),
);

hostTest(
  "P-SBX-3/P-SBX-6 a protected file's bind shows the project's file, or the sandbox does not start: with b/.envrc swapped for a link to a 0600 file of the human's and back by the agent's PTY, no exec ever reads the human's file at b/.envrc",
  NEEDS_TIER_B,
  () =>
    raceTries({
      async prepare(home, proj, i) {
        await Deno.writeTextFile(`${home}/secret${i}`, "the human's secret\n", { mode: 0o600 });
        await Deno.mkdir(`${proj}/b${i}`);
        await Deno.symlink(`${home}/secret${i}`, `${proj}/b${i}/e`);
        return [`b${i}/.envrc`, "file", `b${i}/.envrc`, `b${i}/e`];
      },
      look: 'cat "b$1/.envrc" "b$1/e" 2>/dev/null; true',
      check: (_home, _i, out) => Promise.resolve(out.includes("secret") ? JSON.stringify(out) : ""),
      clear: (proj, i) => removeAll(proj, [`b${i}`]),
    }),
);
