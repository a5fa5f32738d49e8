/**
 * Issue 33: bin/shoal-kernel runs the kernel from a bundle of its sources (scripts/kernel_bundle.ts)
 * only while that bundle is fresh; without one it runs the sources and builds one in the
 * background for the next start. Each test works in a copy of the checkout, so that its bundles
 * and the changes it makes to the sources are its own.
 */
import assert from "node:assert/strict";
import { INLINE_PARSE_LIMIT } from "../../../src/protocol/limits.ts";
import { BUILD_TIMEOUT_MS } from "../../../scripts/kernel_bundle.ts";
import { hostTest, needsLinux } from "../../_support/host.ts";
import { launchKernel } from "../../_support/kernel.ts";
import { processLive } from "../../_support/proc.ts";
import type { Rec } from "../../_support/rec.ts";
import { REPO, type Sandbox, sandbox } from "../../_support/sandbox.ts";
import { waitUntil } from "../../_support/wait.ts";

/** A copy of the checkout's kernel, its launcher and their build in `box`, sharing its Deno. */
async function copyCheckout(box: Sandbox): Promise<string> {
  const copy = `${box.dir}/checkout`;
  await Deno.mkdir(copy);
  const { success } = await new Deno.Command("cp", {
    args: ["-R", "bin", "scripts", "src", "deno.json", "deno.lock", copy],
    cwd: REPO,
  }).output();
  assert.ok(success, "cp");
  await Deno.symlink(`${REPO}/.tools`, `${copy}/.tools`);
  return copy;
}

/** What `shoal-kernel --version` of `copy` prints. */
async function version(box: Sandbox, copy: string): Promise<string> {
  const { stdout } = await new Deno.Command(`${copy}/bin/shoal-kernel`, {
    args: ["--version"],
    env: box.env(),
    clearEnv: true,
    cwd: box.dir,
  }).output();
  return new TextDecoder().decode(stdout).trim();
}

/** The pid of `copy`'s build running now, if any. */
function builder(copy: string): number | null {
  try {
    return Number(Deno.readTextFileSync(`${copy}/.build/build.pid`).trim());
  } catch {
    return null;
  }
}

/** Waits until `copy` holds `count` bundles and its build has ended (each `deno bundle` bounded). */
async function built(copy: string, count: number): Promise<void> {
  const failed = () => bundleEntries(copy).find((n) => n.endsWith(".failed"));
  await waitUntil(() => bundles(copy).length >= count || !!failed(), 2 * BUILD_TIMEOUT_MS);
  assert.equal(failed(), undefined, "the build failed");
  await buildDone(copy);
  assert.equal(bundles(copy).length, count);
}

/** Waits until `copy`'s build, if one runs, has ended. */
async function buildDone(copy: string): Promise<void> {
  const pid = builder(copy);
  if (pid !== null) await waitUntil(() => !processLive(pid), 2 * BUILD_TIMEOUT_MS);
}

/** The names in `copy`'s directory of bundles. */
function bundleEntries(copy: string): string[] {
  try {
    return [...Deno.readDirSync(`${copy}/.build`)].map((e) => e.name);
  } catch {
    return [];
  }
}

/** The bundles built in `copy`. */
function bundles(copy: string): string[] {
  return bundleEntries(copy).filter((n) => /^kernel\.\d+$/.test(n)).sort();
}

/** The kernel's main module as its command line names it. */
function mainModule(pid: number): string {
  const argv = Deno.readTextFileSync(`/proc/${pid}/cmdline`).split("\0");
  return argv.find((a) => a.endsWith("/main.ts") || a.endsWith("/main.js")) ?? argv.join(" ");
}

/** Ends the build `copy` may still run, then removes the sandbox. */
async function cleanup(box: Sandbox, copy: string): Promise<void> {
  await buildDone(copy);
  await box.cleanup();
}

Deno.test("the freshness key of bin/shoal-kernel covers every source of the kernel and the protocol", () => {
  // Its globs reach src/kernel/*/*/*.ts: a module deeper would be left out of the key.
  const depth = (dir: string, level: number): number =>
    Math.max(
      level,
      ...[...Deno.readDirSync(dir)].filter((e) => e.isDirectory).map((e) =>
        depth(`${dir}/${e.name}`, level + 1)
      ),
    );
  assert.ok(depth(`${REPO}/src/kernel`, 0) <= 2, "src/kernel holds a directory 3 levels deep");
  assert.equal(depth(`${REPO}/src/protocol`, 0), 0, "src/protocol holds a directory");
});

Deno.test("a start with no bundle runs the sources and leaves a bundle, and a changed source is never run from a stale one", async () => {
  const box = await sandbox();
  const copy = await copyCheckout(box);
  try {
    assert.deepEqual(bundles(copy), []);
    assert.equal(await version(box, copy), "shoal-kernel 0.1.0");
    await built(copy, 1);
    assert.equal(await version(box, copy), "shoal-kernel 0.1.0");
    // The bundle no longer matches: the changed source runs at once, and a new bundle is built.
    const file = `${copy}/src/protocol/version.ts`;
    Deno.writeTextFileSync(file, Deno.readTextFileSync(file).replace('"0.1.0"', '"0.1.0-changed"'));
    assert.equal(await version(box, copy), "shoal-kernel 0.1.0-changed");
    await built(copy, 2);
    assert.equal(await version(box, copy), "shoal-kernel 0.1.0-changed");
    // Back as it was: the first bundle is fresh again.
    Deno.writeTextFileSync(file, Deno.readTextFileSync(file).replace('"0.1.0-changed"', '"0.1.0"'));
    assert.equal(await version(box, copy), "shoal-kernel 0.1.0");
    assert.equal(builder(copy), null, "no build for sources that have a bundle");
  } finally {
    await cleanup(box, copy);
  }
});

Deno.test("a start whose bundle cannot be built runs its sources all the same", async () => {
  const box = await sandbox();
  const copy = await copyCheckout(box);
  try {
    Deno.writeTextFileSync(`${copy}/.build`, "not a directory\n");
    assert.equal(await version(box, copy), "shoal-kernel 0.1.0");
    assert.equal(await version(box, copy), "shoal-kernel 0.1.0");
  } finally {
    await cleanup(box, copy);
  }
});

hostTest(
  "a kernel started with a fresh bundle runs it, and its analysis worker too",
  needsLinux("/proc/PID/cmdline"),
  async () => {
    const box = await sandbox();
    const copy = await copyCheckout(box);
    try {
      assert.equal(await version(box, copy), "shoal-kernel 0.1.0");
      await built(copy, 1);
      const [bundle] = bundles(copy);
      const socket = box.socket();
      const kernel = await launchKernel(box, ["--socket", socket], socket, {}, [
        `${copy}/bin/shoal-kernel`,
      ]);
      try {
        assert.equal(mainModule(kernel.child.pid), `${copy}/.build/${bundle}/main.js`);
        const conn = await kernel.attach();
        // Past the inline limit: parsed by the analysis worker (E-4), bundled beside the chunks.
        const script = "echo ok # " + "x".repeat(INLINE_PARSE_LIMIT) + "\n";
        const ran = await conn.request("exec", { src: script, position: "value" }) as Rec;
        assert.deepEqual((ran.value as Rec).out, { $: "str", v: "ok\n" });
      } finally {
        await kernel.stop();
      }
    } finally {
      await cleanup(box, copy);
    }
  },
);
