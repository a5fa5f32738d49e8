import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { exec } from "../../_support/exec.ts";
import { leftInTmp, startKernel, type TestKernel } from "../../_support/kernel.ts";
import { pidsMentioning, sandbox } from "../../_support/sandbox.ts";
import { waitUntil } from "../../_support/wait.ts";

/** Every file under `dir`, recursively. */
function files(dir: string): string[] {
  return [...Deno.readDirSync(dir)].flatMap((e) =>
    e.isDirectory ? files(`${dir}/${e.name}`) : [`${dir}/${e.name}`]
  );
}

Deno.test("after 60 execs (ok, failed, stderr, background, cancelled) tmp/ holds no spool, every CAS blob hashes to its name, and shutdown leaves tmp/ empty (J-4, G-STATE-2)", async () => {
  const k = await startKernel();
  const state = `${k.box.dir}/state/shoal`;
  try {
    const conn = await k.attach();
    for (let i = 0; i < 50; i++) {
      await exec(conn, `echo out-${i}; echo err-${i} >&2; exit $((${i} % 3))`, {
        position: "value",
      });
    }
    for (let i = 0; i < 10; i++) {
      const { task } = await exec(conn, `echo bg-${i}; sleep ${i % 2 ? 30 : 0}`, { async: true });
      if (i % 2) await conn.request("task.cancel", { task });
      await conn.request("task.await", { task, timeout_ms: 30000 });
    }
    assert.deepEqual(leftInTmp(state), []);
    for (const path of files(`${state}/cas`)) {
      const hex = createHash("sha256").update(Deno.readFileSync(path)).digest("hex");
      assert.equal(path.endsWith(`/${hex}`), true, `${path} holds other bytes`);
    }
    assert.equal(await k.stop(), 0);
    assert.deepEqual([...Deno.readDirSync(`${state}/tmp`)], []);
  } finally {
    await k.cleanup();
  }
});

Deno.test("G-STATE-2: scratch directories of a kernel killed mid-exec, with the session state they dumped, are gone from tmp/ once the next kernel starts", async () => {
  const box = await sandbox();
  const state = `${box.dir}/state/shoal`;
  const first = await startKernel([], box);
  let second: TestKernel | undefined;
  try {
    const conn = await first.attach();
    await exec(conn, "export SHOAL_PROBE_SECRET=hunter2");
    const running = exec(conn, "sleep 2.345").catch(() => null);
    await waitUntil(() => pidsMentioning("sleep 2.345").length > 0, 10000);
    first.child.kill("SIGKILL");
    await running;
    await first.stop();
    // bash outlives the kernel, finishes and dumps the session state into its scratch directory.
    const dumped = () =>
      files(`${state}/tmp`).filter((path) =>
        Deno.statSync(path).isFile && Deno.readTextFileSync(path).includes("hunter2")
      );
    await waitUntil(() => dumped().length > 0, 10000);
    second = await startKernel([], box);
    const left = [...Deno.readDirSync(`${state}/tmp`)].filter((e) => e.name.startsWith("run-"));
    assert.deepEqual(left, []);
  } finally {
    await first.stop();
    await (second ?? { cleanup: () => box.cleanup() }).cleanup();
  }
});

Deno.test("G-STATE-2: the output spools of a kernel killed while more runs wrote large output than it had blanks ready are gone from tmp/ once the next kernel starts", async () => {
  const box = await sandbox();
  const state = `${box.dir}/state/shoal`;
  const marker = `sleep 300.${Deno.pid}${Date.now() % 1000}`;
  const runs = 16;
  const first = await startKernel([], box);
  let second: TestKernel | undefined;
  /** Files in tmp/ holding bytes: the spools of runs' output (blanks are empty). */
  const spools = () =>
    files(`${state}/tmp`).filter((path) => {
      try {
        return Deno.statSync(path).size > 0;
      } catch {
        return false; // moved into the CAS meanwhile
      }
    });
  try {
    const conn = await first.attach();
    // Started at once, each past the 64 KiB a run's output is held in memory: each run spools.
    await Promise.all(
      Array.from(
        { length: runs },
        (_, i) =>
          exec(conn, `head -c 200000 /dev/zero | tr '\\0' ${i}; ${marker}`, { async: true }),
      ),
    );
    assert.ok(
      await waitUntil(
        () => pidsMentioning(marker).length >= runs && spools().length >= runs,
        20000,
      ),
      `${spools().length} spools`,
    );
    first.child.kill("SIGKILL");
    await first.stop();
    for (const pid of pidsMentioning(marker)) Deno.kill(pid, "SIGKILL");
    second = await startKernel([], box);
    assert.deepEqual(spools(), []);
  } finally {
    for (const pid of pidsMentioning(marker)) Deno.kill(pid, "SIGKILL");
    await first.stop();
    await (second ?? { cleanup: () => box.cleanup() }).cleanup();
  }
});
