// K-JQ-2 [FIX] (D-FIX-12): journal.query matched effects by substring in the original. On a real
// kernel, a row whose only effects are reading a file and spawning cat must not match effect
// kinds that occur in the file's name.
import assert from "node:assert/strict";
import { kernelTest } from "../../_support/kernel.ts";
import { exec } from "../../_support/exec.ts";
import type { Rec } from "../../_support/rec.ts";

kernelTest(
  "K-JQ-2 the effects filter matches effect kinds, not text: cat ./fs_write-net_connect matches fs_read and proc_spawn, never fs_write or net_connect",
  async (k) => {
    const conn = await k.attach();
    const name = "fs_write-net_connect-fs_delete";
    await Deno.writeTextFile(`${k.box.dir}/${name}`, "x\n");
    await exec(conn, `cat ./${name}`);
    const srcs = async (effects: string[]) =>
      (await conn.request("journal.query", { effects }) as Rec[]).map((r) => r.src);
    assert.deepEqual(await srcs(["fs_read", "proc_spawn"]), [`cat ./${name}`]);
    for (const kind of ["fs_write", "net_connect", "fs_delete", "fs.write"]) {
      assert.deepEqual(await srcs([kind]), [], kind);
    }
  },
);
