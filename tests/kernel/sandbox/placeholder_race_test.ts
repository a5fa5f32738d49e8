/**
 * The kernel makes a placeholder (P-SBX-6) in a directory an agent's program running in another
 * sandbox may write at that moment (a PTY's: no resident waits for it), so nothing the kernel does
 * there may follow what the agent puts at that name, or at a directory above it, meanwhile
 * (SPEC §7.8 P-SBX-3: nothing outside the grants is the agent's to change).
 */
import assert from "node:assert/strict";
import { exec } from "../../_support/exec.ts";
import { startKernelWithAgent } from "../../_support/kernel.ts";
import { hostTest, NEEDS_TIER_B } from "../../_support/host.ts";
import { PROJECT_AGENT } from "../../_support/principals.ts";
import type { Rec } from "../../_support/rec.ts";
import { pollUntil } from "../../_support/wait.ts";
import { withTempDir } from "../../_support/temp_dir.ts";
import { holdPlaceholders } from "../../../src/kernel/sandbox/placeholders.ts";

/**
 * Run in the agent's PTY, in its project, with try number `i` and the two names to swap: once told
 * to go (a line on stdin), makes `sub<i>/.envrc` a link to the absent `t<i>/x` (whose directory
 * exists), so the kernel's next view holds `t<i>/x` with a directory placeholder, then swaps the
 * two names with renameat2(RENAME_EXCHANGE) for ever.
 */
const RACER = String.raw`
import ctypes, os, sys
i, a, b = sys.argv[1:]
libc = ctypes.CDLL(None, use_errno=True)
nr = {"x86_64": 316, "aarch64": 276}[os.uname().machine]
sys.stdin.readline()
os.symlink(f"../t{i}/x", f"sub{i}/.envrc")
print("ready", flush=True)
while True:
    libc.syscall(nr, -100, a.encode(), -100, b.encode(), 2)
`;

const TRIES = 3;

/**
 * Runs 3 tries with a kernel and a sandboxed project agent: `prepare(i)` sets up try `i` on the
 * host and names the two entries the agent's racer `i` swaps in its PTY meanwhile; the agent's
 * exec in session `work<i>` would make the kernel make `t<i>/x` (and the other tries' `t<j>/x`)
 * under those racers (it waits for the PTYs, then is refused, `sandbox_busy`, which `mustRefuse`
 * asserts); then `check(i)` looks at the host. Before the PTY counted as a writer, a swap landed
 * in the kernel's or bwrap's window in about one try of five. The tries go at once: each refusal
 * comes after the kernel's 10 s wait for the PTYs, 30 s one after another. The racers start
 * swapping only once every PTY is open: a PTY's own sandbox opened beside a racer already swapping
 * would wait for it too.
 */
async function raceTries(
  prepare: (home: string, proj: string, i: number) => Promise<[string, string]>,
  check: (home: string, i: number) => Promise<void>,
  mustRefuse = true,
): Promise<void> {
  const { kernel: k, token } = await startKernelWithAgent("agent:c", PROJECT_AGENT);
  try {
    const home = `${k.box.dir}/home`;
    const proj = `${home}/proj`;
    await Deno.mkdir(proj, { recursive: true });
    await Deno.writeTextFile(`${proj}/racer.py`, RACER);
    const tries = Array.from({ length: TRIES }, (_, i) => i);
    // each try has a placeholder of its own (t<i>/x), its own racer and its own session
    const swapped: [string, string][] = [];
    for (const i of tries) {
      await Deno.mkdir(`${proj}/t${i}`);
      await Deno.mkdir(`${proj}/sub${i}`);
      swapped.push(await prepare(home, proj, i));
    }
    const agents = await Promise.all(tries.map(async (i) => {
      await exec(await k.attach(`work${i}`), `cd ${proj}`);
      return await k.attach(`work${i}`, token);
    }));
    const ptys: string[] = [];
    for (const i of tries) {
      const opened = await agents[0].request("pty.open", {
        cmd: "python3",
        args: ["racer.py", `${i}`, ...swapped[i]],
      }) as Rec;
      ptys.push(opened.pty_id as string);
    }
    for (const pty_id of ptys) {
      await agents[0].request("pty.send", { pty_id, input: ["go", { key: "Enter" }] });
      await pollUntil(
        () => agents[0].request("pty.read", { pty_id }) as Promise<Rec>,
        (r) => (r.screen as string[]).some((row) => row.startsWith("ready")),
      );
    }
    // each view holds every t<i>/x, absent, where the PTYs' programs write
    const refused = await Promise.all(
      agents.map((agent) => exec(agent, "ls sub0").then(() => null, (e) => e.data?.reason)),
    );
    for (const pty_id of ptys) await agents[0].request("pty.close", { pty_id });
    for (const i of tries) {
      // where the racer swaps t<i> itself the scan may find a link there: nothing to hold then
      if (mustRefuse) assert.equal(refused[i], "sandbox_busy", `the exec of try ${i + 1}`);
      await check(home, i);
    }
  } finally {
    await k.cleanup();
  }
}

hostTest(
  "P-SBX-3/P-SBX-6 an agent cannot make the kernel change a file outside its grants through a placeholder it swaps for a link: a program in its PTY swapped the fresh t/x placeholder for a link to a 0600 file of the human's, and the kernel's chmod (sticky bit) followed it",
  NEEDS_TIER_B,
  async () => {
    let secret = "";
    await raceTries(async (home, proj, i) => {
      secret = `${home}/secret`;
      if (i === 0) await Deno.writeTextFile(secret, "the human's\n", { mode: 0o600 });
      await Deno.chmod(secret, 0o600);
      await Deno.symlink(secret, `${proj}/t${i}/s`);
      return [`t${i}/s`, `t${i}/x`];
    }, async (_home, i) => {
      const mode = (await Deno.lstat(secret)).mode! & 0o7777;
      assert.equal(mode.toString(8), "600", `the human's file, after try ${i + 1}`);
    });
  },
);

hostTest(
  "P-SBX-3/P-SBX-6 an agent cannot make the kernel create anything outside its grants by swapping a placeholder's directory for a link: a program in its PTY swapped t/ (scanned as a directory) for a link to a directory of the human's, and an empty directory x appeared there (made by the kernel's mkdir, or by bwrap's of its bind's destination)",
  NEEDS_TIER_B,
  async () => {
    await raceTries(async (home, proj, i) => {
      await Deno.mkdir(`${home}/out${i}`);
      await Deno.symlink(`${home}/out${i}`, `${proj}/u${i}`);
      return [`u${i}`, `t${i}`];
    }, async (home, i) => {
      // a release after the sandbox ended removes what was made: look before and after it
      const made = [];
      for await (const e of Deno.readDir(`${home}/out${i}`)) made.push(e.name);
      assert.deepEqual(made, [], `the human's directory, after try ${i + 1}`);
    }, false);
  },
);

/** Swaps the entries `a` and `b` (renameat2 RENAME_EXCHANGE) for ever; run on the host. */
const SWAPPER = String.raw`
import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
nr = {"x86_64": 316, "aarch64": 276}[os.uname().machine]
a, b = sys.argv[1].encode(), sys.argv[2].encode()
print("ready", flush=True)
while True:
    libc.syscall(nr, -100, a, -100, b, 2)
`;

Deno.test(
  "P-SBX-3/P-SBX-6 the kernel makes a placeholder in the directory its path names with no link on the way, or not at all: with t/ swapped for a link to a directory of the human's over and over, no placeholder t/x (directory, or file of its text) is ever made there",
  async () => {
    await withTempDir(async (dir) => {
      const real = await Deno.realPath(dir);
      await Deno.mkdir(`${real}/t`);
      await Deno.mkdir(`${real}/out`);
      await Deno.symlink(`${real}/out`, `${real}/u`);
      const swapper = new Deno.Command("python3", {
        args: ["-c", SWAPPER, `${real}/t`, `${real}/u`],
        stdout: "piped",
      }).spawn();
      try {
        const reader = swapper.stdout.getReader();
        await reader.read(); // ready
        reader.releaseLock();
        for (let i = 0; i < 300; i++) {
          const path = `${real}/t/x${i}`;
          const text = i % 2 === 0 ? undefined : "gitdir\n";
          holdPlaceholders({ paths: [{ path, absent: true, ...(text ? { text } : {}) }] })();
          const made = [...Deno.readDirSync(`${real}/out`)].map((e) => e.name);
          assert.deepEqual(made, [], `the human's directory, after try ${i + 1}`);
        }
      } finally {
        swapper.kill("SIGKILL");
        await swapper.status;
        await swapper.stdout.cancel().catch(() => {});
      }
    });
  },
);

Deno.test(
  "P-SBX-3/P-SBX-6 the kernel sets no mode through a link swapped in for a fresh directory placeholder: with t/x swapped for a link to a 0600 file of the human's over and over, that file keeps its mode",
  async () => {
    await withTempDir(async (dir) => {
      const real = await Deno.realPath(dir);
      const secret = `${real}/secret`;
      await Deno.mkdir(`${real}/t`);
      await Deno.writeTextFile(secret, "the human's\n");
      await Deno.chmod(secret, 0o600);
      await Deno.symlink(secret, `${real}/t/s`);
      const swapper = new Deno.Command("python3", {
        args: ["-c", SWAPPER, `${real}/t/s`, `${real}/t/x`],
        stdout: "piped",
      }).spawn();
      try {
        const reader = swapper.stdout.getReader();
        await reader.read(); // ready
        reader.releaseLock();
        for (let i = 0; i < 300; i++) {
          holdPlaceholders({ paths: [{ path: `${real}/t/x`, absent: true }] })();
          const mode = (await Deno.lstat(secret)).mode! & 0o7777;
          assert.equal(mode.toString(8), "600", `the human's file, after try ${i + 1}`);
          // what the swaps left: the placeholder's directory under either name, gone
          for (const name of ["x", "s"]) {
            const info = await Deno.lstat(`${real}/t/${name}`).catch(() => null);
            if (info?.isDirectory) await Deno.remove(`${real}/t/${name}`).catch(() => {});
          }
          const left = await Deno.lstat(`${real}/t/s`).catch(() => null) ??
            await Deno.lstat(`${real}/t/x`).catch(() => null);
          if (left === null) await Deno.symlink(secret, `${real}/t/s`);
        }
      } finally {
        swapper.kill("SIGKILL");
        await swapper.status;
        await swapper.stdout.cancel().catch(() => {});
      }
    });
  },
);
