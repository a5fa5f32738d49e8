import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { exec } from "../../_support/exec.ts";
import { leftInTmp, startKernel } from "../../_support/kernel.ts";

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
