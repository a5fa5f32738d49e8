/**
 * The launcher compiled in C (issue 34 item 5): compiled once and kept, nothing kept when the
 * compiler fails, and a compiled launcher that does not start leaves the runs to perl's.
 */
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { compiledLauncher, LAUNCHER_HASH } from "../../../src/kernel/sandbox/compiled_launcher.ts";
import { LAUNCHER_C } from "../../../src/kernel/sandbox/launcher_c.ts";
import { HOST_SANDBOX, hostTest, NEEDS_TIER_B } from "../../_support/host.ts";
import { commandLine, parentPid } from "../../_support/proc.ts";
import { withResidents } from "../../_support/residents.ts";
import { withTempDir } from "../../_support/temp_dir.ts";

/** Why a test of the compiler cannot run here, or null. */
const NEEDS_CC = HOST_SANDBOX.tier === "B" && HOST_SANDBOX.cc === null
  ? "needs a C compiler (cc)"
  : NEEDS_TIER_B;

/** A stop that never comes. */
const NEVER = new AbortController().signal;

/** A fake compiler in `dir`: a shell script with `body`, given the output path as $out. */
async function fakeCompiler(dir: string, body: string): Promise<string> {
  const cc = `${dir}/cc`;
  await Deno.writeTextFile(
    cc,
    `#!/bin/sh\nwhile [ $# -gt 0 ]; do [ "$1" = -o ] && out=$2; shift; done\ncat >/dev/null\n${body}\n`,
    { mode: 0o755 },
  );
  return cc;
}

Deno.test("the launcher's file name holds the SHA-256 of its source, written out so no kernel hashes it at start (issue 33): change LAUNCHER_HASH with LAUNCHER_C", () => {
  const hash = createHash("sha256").update(LAUNCHER_C).digest("hex").slice(0, 16);
  assert.equal(LAUNCHER_HASH, hash, `LAUNCHER_HASH must be "${hash}"`);
});

hostTest(
  "the launcher is compiled once per source and kept: a second kernel finds it",
  NEEDS_CC,
  () =>
    withTempDir(async (dir) => {
      const cc = (HOST_SANDBOX as { cc: string }).cc;
      const first = await compiledLauncher(dir, cc, NEVER);
      assert.ok(first !== null && first.startsWith(`${dir}/launcher-`));
      const info = await Deno.stat(first);
      assert.ok(((info.mode ?? 0) & 0o111) !== 0, "executable");
      // a compiler that would fail is never asked again: the kept one serves
      const broken = await fakeCompiler(dir, "exit 1");
      assert.equal(await compiledLauncher(dir, broken, NEVER), first);
      assert.equal((await Deno.stat(first)).ino, info.ino);
      assert.deepEqual(
        [...Deno.readDirSync(dir)].map((e) => e.name).sort(),
        ["cc", first.slice(dir.length + 1)],
      );
    }),
);

hostTest(
  "a compiler that fails gives no launcher and leaves no file behind",
  NEEDS_TIER_B,
  () =>
    withTempDir(async (dir) => {
      const cc = await fakeCompiler(dir, 'echo partial > "$out"; exit 1');
      assert.equal(await compiledLauncher(dir, cc, NEVER), null);
      assert.deepEqual([...Deno.readDirSync(dir)].map((e) => e.name), ["cc"]);
    }),
);

hostTest(
  "a compiled launcher that does not start leaves the runs to perl's launcher",
  NEEDS_TIER_B,
  () =>
    withTempDir(async (bin) => {
      // "compiles" a program that exits at once, without a word
      const cc = await fakeCompiler(
        bin,
        'printf "#!/bin/sh\\nexit 3\\n" > "$out"; chmod +x "$out"',
      );
      const host = { ...(HOST_SANDBOX as typeof HOST_SANDBOX & { tier: "B" }), cc };
      await withResidents(async ({ proj, residents, sandboxing }) => {
        const resident = await residents.get("s", sandboxing());
        assert.equal(resident.launches, true);
        const dir = resident.pool.acquire();
        await resident.untilSpare();
        const child = resident.spawn(
          { cwd: proj, env: new Map(), vars: new Map(), funcs: new Map(), aliases: new Map() },
          ["/bin/bash", "-c", "echo ran; exec sleep 60"],
          dir,
        );
        resident.hold(child);
        const out = child.stdout.getReader();
        assert.equal(new TextDecoder().decode((await out.read()).value), "ran\n");
        assert.match(commandLine(parentPid(child.pid)) ?? "", /^\/usr\/bin\/perl /);
        Deno.kill(-child.pid, "SIGKILL");
        assert.equal((await child.status).signal, "SIGKILL");
        out.releaseLock();
        await child.stdout.cancel();
        await child.stderr.cancel();
        resident.pool.release(dir);
      }, host);
    }),
);

hostTest(
  "each sandbox's launcher is another name of the one compiled file, not a copy of it",
  NEEDS_CC,
  () =>
    withResidents(async ({ root, residents, sandboxing }) => {
      await residents.get("s1", sandboxing());
      await residents.get("s2", sandboxing());
      const names = [...Deno.readDirSync(root)].map((e) => e.name);
      const compiled = names.filter((name) => name.startsWith("launcher-"));
      assert.equal(compiled.length, 1, names.join(" "));
      const sandboxes = names.filter((name) => name.startsWith("sandbox-"));
      assert.equal(sandboxes.length, 2, names.join(" "));
      const ino = Deno.statSync(`${root}/${compiled[0]}`).ino;
      for (const dir of sandboxes) assert.equal(Deno.statSync(`${root}/${dir}/launcher`).ino, ino);
    }),
);

hostTest(
  "a kernel's shutdown stops a compile of the launcher, its compiler's processes and all, and starts no sandbox for it (it waited up to 60 s for the compiler, then started one to kill it; a compile whose sandbox failed to start went on after the kernel and wrote into its directory)",
  NEEDS_TIER_B,
  () =>
    withTempDir(async (bin) => {
      // a compiler whose pass outlives its driver, as cc1 or ld would: it writes the output late
      const cc = await fakeCompiler(
        bin,
        `echo $$ > ${bin}/cc.pid; (sleep 2; echo late > "$out") & wait`,
      );
      const host = { ...(HOST_SANDBOX as typeof HOST_SANDBOX & { tier: "B" }), cc };
      let root = "";
      await withResidents(async (context) => {
        root = context.root;
        const starting = context.residents.get("s", context.sandboxing());
        starting.catch(() => {});
        while (!(await Deno.stat(`${bin}/cc.pid`).then(() => true, () => false))) {
          await new Promise((done) => setTimeout(done, 20));
        }
        await context.residents.closeAll();
        await assert.rejects(starting, /shutting down/);
        const pid = Number(await Deno.readTextFile(`${bin}/cc.pid`));
        assert.equal(await Deno.stat(`/proc/${pid}`).then(() => true, () => false), false);
        await new Promise((done) => setTimeout(done, 2500));
        const left = [...Deno.readDirSync(root)].map((e) => e.name);
        assert.deepEqual(left.filter((name) => name.startsWith("launcher-")), [], left.join(" "));
      }, host);
    }),
);

hostTest(
  "a compile stopped by the kernel's shutdown leaves none of the compiler's temporary files (gcc writes them in $TMPDIR, and a killed gcc left its /tmp/cc*.s and .o there)",
  NEEDS_TIER_B,
  () =>
    withTempDir(async (dir) => {
      // writes a temporary file where gcc would, then waits to be stopped
      const cc = await fakeCompiler(
        dir,
        `t="\${TMPDIR:-/tmp}/ccFAKE$$.s"; echo x > "$t"; echo "$t" > ${dir}/cc.tmp; sleep 60`,
      );
      const stop = new AbortController();
      const compiling = compiledLauncher(dir, cc, stop.signal);
      while (!(await Deno.stat(`${dir}/cc.tmp`).then(() => true, () => false))) {
        await new Promise((done) => setTimeout(done, 20));
      }
      const temporary = (await Deno.readTextFile(`${dir}/cc.tmp`)).trim();
      stop.abort();
      assert.equal(await compiling, null);
      const kept = await Deno.stat(temporary).then(() => true, () => false);
      await Deno.remove(temporary).catch(() => {});
      assert.equal(kept, false, `${temporary} kept`);
      assert.deepEqual([...Deno.readDirSync(dir)].map((e) => e.name).sort(), ["cc", "cc.tmp"]);
    }),
);
