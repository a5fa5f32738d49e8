/**
 * What ended sandboxes leave in the state directory's `tmp/` (G-STATE-2): the directories a
 * resident sandbox and the proxy (P-NET-1) are made in, with the agent's sources and a dead proxy
 * socket in them, go with their sandbox, and those of a SIGKILLed kernel when the next kernel
 * starts, as its bash scratch does.
 */
import assert from "node:assert/strict";
import { exec } from "../../_support/exec.ts";
import { startKernel, type TestKernel } from "../../_support/kernel.ts";
import { hostTest, NEEDS_TIER_B } from "../../_support/host.ts";
import { createToken, PROJECT_AGENT, writePolicy } from "../../_support/principals.ts";
import type { Rec } from "../../_support/rec.ts";
import { sandbox } from "../../_support/sandbox.ts";
import { exists } from "../../_support/paths.ts";
import { waitUntil } from "../../_support/wait.ts";

/** Every entry below `dir`, recursively, as paths relative to it (none of one gone meanwhile). */
function tree(dir: string, prefix = ""): string[] {
  let entries: Deno.DirEntry[];
  try {
    entries = [...Deno.readDirSync(dir)];
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) return [];
    throw e;
  }
  return entries.flatMap((e) => {
    const rel = `${prefix}${e.name}`;
    return e.isDirectory ? [rel, ...tree(`${dir}/${e.name}`, `${rel}/`)] : [rel];
  });
}

/** Whether the regular file at `path` holds `text` (false when it is gone meanwhile). */
function holds(path: string, text: string): boolean {
  try {
    const st = Deno.lstatSync(path);
    return st.isFile && st.size < 1_000_000 && Deno.readTextFileSync(path).includes(text);
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) return false;
    throw e;
  }
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
      // a run going on when the kernel dies: its sandbox and scratch are in use
      await exec(agent, "export SHOAL_PROBE_SECRET=hunter2; sleep 60", { async: true });
      const secretIn = () =>
        tree(tmp).some((p) => /^sandbox-/.test(p) && holds(`${tmp}/${p}`, "hunter2"));
      assert.ok(await waitUntil(secretIn, 10_000), "the run's source in its scratch");
      assert.ok(tree(tmp).some((p) => /^net-[^/]*\/proxy$/.test(p)), "the proxy's socket");
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

hostTest(
  "G-STATE-2: a resident sandbox the agent kills from inside (kill -KILL -1 ends its launcher, and with it the sandbox) takes its directory in tmp/ along: one per such exec stayed for the kernel's life, and after its shutdown",
  NEEDS_TIER_B,
  async () => {
    const box = await sandbox();
    const tmp = `${box.dir}/state/shoal/tmp`;
    const proj = `${box.dir}/home/proj`;
    await Deno.mkdir(proj);
    const { secret } = await createToken(box, "agent:a", "agent:a");
    const policy = await writePolicy(box, { "agent:a": PROJECT_AGENT });
    const k = await startKernel(["--policy", policy], box);
    const residents = () => [...Deno.readDirSync(tmp)].filter((e) => e.name.startsWith("sandbox-"));
    try {
      const human = await k.attach("work");
      await exec(human, `cd ${proj}`);
      const agent = await k.attach("work", secret);
      for (let i = 0; i < 4; i++) {
        // bash itself survives its kill -1 (Linux spares the caller) unless the sandbox's end
        // takes it first
        const r = await exec(agent, "kill -KILL -1", { position: "value" }) as Rec;
        assert.equal((r.value as Rec).$, "outcome");
      }
      // the one the next exec enters, and one a warm shell may be starting
      assert.ok(
        await waitUntil(() => residents().length <= 2, 10_000),
        `${residents().length} left`,
      );
      assert.equal(await k.stop(), 0);
      assert.deepEqual(residents(), []);
    } finally {
      await k.cleanup();
    }
  },
);

hostTest(
  "G-STATE-2: the launcher a SIGKILLed kernel was compiling (its compiler finishes after it) is not left in tmp/ under the dead kernel's pid once the next kernel starts",
  NEEDS_TIER_B,
  async () => {
    const box = await sandbox();
    const tmp = `${box.dir}/state/shoal/tmp`;
    const proj = `${box.dir}/home/proj`;
    await Deno.mkdir(proj);
    // the host's compiler, slowed down so that the kernel dies while it runs
    const tools = `${box.dir}/tools`;
    await Deno.mkdir(tools);
    const started = `${box.dir}/cc-started`;
    await Deno.writeTextFile(
      `${tools}/cc`,
      `#!/bin/sh\n: > '${started}'\nsleep 2\nexec /usr/bin/cc "$@"\n`,
    );
    await Deno.chmod(`${tools}/cc`, 0o755);
    const env = { PATH: `${tools}:${box.env().PATH}` };
    const { secret } = await createToken(box, "agent:a", "agent:a");
    const policy = await writePolicy(box, { "agent:a": PROJECT_AGENT });
    const first = await startKernel(["--policy", policy], box, env);
    let second: TestKernel | undefined;
    try {
      await exec(await first.attach("work"), `cd ${proj}`);
      const agent = await first.attach("work", secret);
      // its first sandbox compiles the launcher
      exec(agent, "true", { position: "value" }).catch(() => {});
      assert.ok(await waitUntil(() => exists(started), 10_000), "the compiler started");
      first.child.kill("SIGKILL");
      await first.stop();
      const partial = (name: string) => name.startsWith("launcher-") && name.includes(".");
      const names = () => [...Deno.readDirSync(tmp)].map((e) => e.name);
      assert.ok(await waitUntil(() => names().some(partial), 10_000), "the compiler finished");
      second = await startKernel(["--policy", policy], box, env);
      assert.deepEqual(names().filter((name) => name.endsWith(`.${first.child.pid}`)), []);
    } finally {
      await first.stop();
      await (second ?? { cleanup: () => box.cleanup() }).cleanup();
    }
  },
);
